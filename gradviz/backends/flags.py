"""A torch.backends switch: a module attribute that takes only a bool, as torch's do."""


class Flag:
    """A module attribute that takes only a bool, with torch's message for anything else."""

    def __init__(self, default: bool, setter: str):
        self.value, self.setter = default, setter

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, module, owner=None):
        return self.value if module is not None else self

    def __set__(self, module, value):
        if not isinstance(value, bool):
            raise RuntimeError(f"{self.setter} expects a bool, but got {type(value).__name__}")
        self.value = value
