# The same least-squares fit by every optimizer torch.optim has for it, a learning-rate warm-down
# with SWA, and L-BFGS with a closure; the model's parameters printed as a generator.
import torch
import torch.nn as nn

torch.manual_seed(0)
X = torch.randn(128, 4)
true_w = torch.tensor([[1.5], [-2.0], [0.5], [3.0]])
Y = X @ true_w + 0.1 * torch.randn(128, 1)


def fit(name, make, steps=60):
    torch.manual_seed(1)
    model = nn.Linear(4, 1)
    opt = make(model.parameters())
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(X), Y)
        loss.backward()
        opt.step()
    print(f"{name:8s} loss {loss.item():.6f} weight {model.weight.data.view(-1)}")
    return model


fit("SGD", lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9))
fit("NAdam", lambda p: torch.optim.NAdam(p, lr=0.05))
fit("RAdam", lambda p: torch.optim.RAdam(p, lr=0.05))
fit("Adamax", lambda p: torch.optim.Adamax(p, lr=0.05))
fit("Rprop", lambda p: torch.optim.Rprop(p))
fit("ASGD", lambda p: torch.optim.ASGD(p, lr=0.05, t0=20))

torch.manual_seed(1)
model = nn.Linear(4, 1)
print(model.parameters())
print([name in dir(torch.optim) for name in ("NAdam", "RAdam", "Adamax", "Rprop", "ASGD", "LBFGS", "swa_utils")])
opt = torch.optim.SGD(model.parameters(), lr=0.05)
swa_model = torch.optim.swa_utils.AveragedModel(model)
swa_sched = torch.optim.swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=5)
for epoch in range(30):
    opt.zero_grad()
    nn.functional.mse_loss(model(X), Y).backward()
    opt.step()
    if epoch >= 10:
        swa_model.update_parameters(model)
        swa_sched.step()
print(f"SWA: {swa_model.n_averaged.item()} models averaged, lr {opt.param_groups[0]['lr']:.4f}, "
      f"loss {nn.functional.mse_loss(swa_model(X), Y).item():.6f}")

torch.manual_seed(1)
model = nn.Linear(4, 1)
lbfgs = torch.optim.LBFGS(model.parameters(), lr=1, max_iter=20, line_search_fn="strong_wolfe")


def closure():
    lbfgs.zero_grad()
    loss = nn.functional.mse_loss(model(X), Y)
    loss.backward()
    return loss


for _ in range(3):
    lbfgs.step(closure)
print(f"LBFGS loss {closure().item():.6f} weight {model.weight.data.view(-1)}")
