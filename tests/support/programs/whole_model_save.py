# A whole model saved with torch.save and loaded back under weights_only (the default since
# PyTorch 2.6): refused until its classes are allowed with safe_globals / add_safe_globals.
import io
import pickle

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
buffer = io.BytesIO()
torch.save(model, buffer)

buffer.seek(0)
try:
    torch.load(buffer)
except pickle.UnpicklingError as error:
    print("refused:", [line.split("Unsupported global: ")[1].split(" was")[0].rsplit(".", 1)[1]
                       for line in str(error).splitlines() if "Unsupported global" in line])

buffer.seek(0)
print(sorted(name.rsplit(".", 1)[1] for name in torch.serialization.get_unsafe_globals_in_checkpoint(buffer)))
buffer.seek(0)
with torch.serialization.safe_globals([nn.Sequential, nn.Linear, nn.ReLU]):
    loaded = torch.load(buffer)
print(loaded)
x = torch.randn(2, 3)
print(torch.equal(loaded(x), model(x)), nn.ReLU in torch.serialization.get_safe_globals())
t = torch.zeros(2)
t.note = "kept"
buffer = io.BytesIO()
torch.save({"t": t}, buffer)
buffer.seek(0)
print(torch.load(buffer)["t"].note)
