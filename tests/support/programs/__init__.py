"""Small "from scratch" programs, each written for `import torch`, run under PyTorch and under
gradviz (only the imports changed) by tests/nn/test_fidelity_programs.py; docs/fidelity.md is
their table."""
