import torch
from torch.optim.lr_scheduler import CosineAnnealingLR, ExponentialLR, LambdaLR, OneCycleLR, StepLR

param = torch.nn.Parameter(torch.zeros(2))


def run(make, steps=6):
    opt = torch.optim.SGD([param], lr=0.1, momentum=0.9)
    sched = make(opt)
    lrs = []
    for i in range(steps):
        opt.step()
        sched.step()
        lrs.append(round(opt.param_groups[0]["lr"], 8))
    print(type(sched).__name__, lrs)
    return sched


run(lambda o: StepLR(o, step_size=2, gamma=0.5))
run(lambda o: ExponentialLR(o, gamma=0.9))
s = run(lambda o: CosineAnnealingLR(o, T_max=5, eta_min=0.001))
print([round(x, 8) for x in s.get_last_lr()])
run(lambda o: LambdaLR(o, lambda epoch: 1 / (epoch + 1)))
run(lambda o: OneCycleLR(o, max_lr=1.0, total_steps=6))
print(StepLR(torch.optim.SGD([param], lr=0.1), 3).state_dict())
