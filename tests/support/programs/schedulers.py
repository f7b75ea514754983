import torch
from torch.optim.lr_scheduler import CosineAnnealingLR, ExponentialLR, LambdaLR, OneCycleLR, ReduceLROnPlateau, StepLR

param = torch.nn.Parameter(torch.zeros(2))


def run(make, steps=6, metric=None):
    opt = torch.optim.SGD([param], lr=0.1, momentum=0.9)
    sched = make(opt)
    lrs = []
    for i in range(steps):
        opt.step()
        if metric is None:
            sched.step()
        else:
            sched.step(metric[i])
        lrs.append(round(opt.param_groups[0]["lr"], 8))
    print(type(sched).__name__, lrs)
    return sched


run(lambda o: StepLR(o, step_size=2, gamma=0.5))
run(lambda o: ExponentialLR(o, gamma=0.9))
s = run(lambda o: CosineAnnealingLR(o, T_max=5, eta_min=0.001))
print([round(x, 8) for x in s.get_last_lr()])
run(lambda o: LambdaLR(o, lambda epoch: 1 / (epoch + 1)))
run(lambda o: OneCycleLR(o, max_lr=1.0, total_steps=6))
p = run(lambda o: ReduceLROnPlateau(o, patience=1, factor=0.5), metric=[1.0, 1.0, 1.0, 1.0, 0.5, 0.5])
print(p.state_dict())
print(p.best, p.num_bad_epochs, p.in_cooldown)
m = run(lambda o: ReduceLROnPlateau(o, mode="max", threshold_mode="abs", cooldown=1, patience=0, min_lr=0.02),
        metric=[0.5, 0.4, 0.3, 0.6, 0.6, 0.1])
print(m.get_last_lr())
print(StepLR(torch.optim.SGD([param], lr=0.1), 3).state_dict())
