# Optimizers written by hand as courses write them (an Optimizer subclass for SGD with momentum and
# for Adam, with state, closures and state_dict), the char-RNN name classifier from scratch
# (pytorch.org "NLP From Scratch: Classifying Names with a Character-Level RNN", on a few names), and
# "Language Modeling with nn.Transformer" (PositionalEncoding buffer, TransformerEncoder with a
# causal mask, a few steps on random tokens).
import math
import string

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer


class MomentumSGD(Optimizer):
    def __init__(self, params, lr=0.01, momentum=0.9, weight_decay=0.0):
        if lr < 0.0:
            raise ValueError("Invalid learning rate: {}".format(lr))
        defaults = dict(lr=lr, momentum=momentum, weight_decay=weight_decay)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                d_p = p.grad
                if group['weight_decay'] != 0:
                    d_p = d_p.add(p, alpha=group['weight_decay'])
                state = self.state[p]
                if 'momentum_buffer' not in state:
                    buf = state['momentum_buffer'] = torch.clone(d_p).detach()
                else:
                    buf = state['momentum_buffer']
                    buf.mul_(group['momentum']).add_(d_p)
                p.add_(buf, alpha=-group['lr'])
        return loss


class MyAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        defaults = dict(lr=lr, betas=betas, eps=eps)
        super(MyAdam, self).__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data
                if grad.is_sparse:
                    raise RuntimeError('Adam does not support sparse gradients')
                state = self.state[p]
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = torch.zeros_like(p.data, memory_format=torch.preserve_format)
                    state['exp_avg_sq'] = torch.zeros_like(p.data)
                exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
                beta1, beta2 = group['betas']
                state['step'] += 1
                bias_correction1 = 1 - beta1 ** state['step']
                bias_correction2 = 1 - beta2 ** state['step']
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(group['eps'])
                step_size = group['lr'] / bias_correction1
                p.data.addcdiv_(exp_avg, denom, value=-step_size)
        return loss


torch.manual_seed(0)
X = torch.randn(32, 5)
Y = X @ torch.randn(5, 1) + 0.1 * torch.randn(32, 1)
for cls, kwargs in ((MomentumSGD, dict(lr=0.05, weight_decay=1e-3)), (MyAdam, dict(lr=0.05))):
    torch.manual_seed(1)
    model = nn.Linear(5, 1)
    opt = cls(model.parameters(), **kwargs)
    print(opt)
    for step in range(20):
        def closure():
            opt.zero_grad()
            loss = F.mse_loss(model(X), Y)
            loss.backward()
            return loss
        loss = opt.step(closure)
        if step % 5 == 4:
            print(step, loss.item())
    sd = opt.state_dict()
    print(sd['param_groups'], sorted(sd['state'][0].keys()))
    ref = (torch.optim.SGD(nn.Linear(5, 1).parameters(), lr=0.05, momentum=0.9, weight_decay=1e-3)
           if cls is MomentumSGD else torch.optim.Adam(nn.Linear(5, 1).parameters(), lr=0.05))
    print(type(ref).__name__, ref.defaults)
try:
    MomentumSGD(model.parameters(), lr=-1)
except ValueError as e:
    print(e)

# char-RNN name classification
all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)
category_lines = {'English': ['Smith', 'Jones', 'Brown', 'Taylor'], 'French': ['Dubois', 'Lefevre', 'Moreau'],
                  'Italian': ['Rossi', 'Bianchi', 'Romano']}
all_categories = list(category_lines)
n_categories = len(all_categories)


def letterToIndex(letter):
    return all_letters.find(letter)


def letterToTensor(letter):
    tensor = torch.zeros(1, n_letters)
    tensor[0][letterToIndex(letter)] = 1
    return tensor


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


print(letterToTensor('J'))
print(lineToTensor('Jones').size())


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = self.i2h(combined)
        output = self.i2o(combined)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


torch.manual_seed(0)
n_hidden = 16
rnn = RNN(n_letters, n_hidden, n_categories)
input = letterToTensor('A')
hidden = torch.zeros(1, n_hidden)
output, next_hidden = rnn(input, hidden)
print(output)


def categoryFromOutput(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return all_categories[category_i], category_i


print(categoryFromOutput(output))
criterion = nn.NLLLoss()
learning_rate = 0.005


def train(category_tensor, line_tensor):
    hidden = rnn.initHidden()
    rnn.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)
    return output, loss.item()


import random

random.seed(0)
current_loss = 0
for iter in range(1, 61):
    category = random.choice(all_categories)
    line = random.choice(category_lines[category])
    category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
    line_tensor = lineToTensor(line)
    output, loss = train(category_tensor, line_tensor)
    current_loss += loss
    if iter % 20 == 0:
        guess, guess_i = categoryFromOutput(output)
        correct = '✓' if guess == category else '✗ (%s)' % category
        print('%d %d%% %.4f %s / %s %s' % (iter, iter / 60 * 100, loss, line, guess, correct))
confusion = torch.zeros(n_categories, n_categories)
with torch.no_grad():
    for category in all_categories:
        for line in category_lines[category]:
            hidden = rnn.initHidden()
            lt = lineToTensor(line)
            for i in range(lt.size()[0]):
                output, hidden = rnn(lt[i], hidden)
            guess, guess_i = categoryFromOutput(output)
            confusion[all_categories.index(category)][guess_i] += 1
for i in range(n_categories):
    confusion[i] = confusion[i] / confusion[i].sum()
print(confusion)


# Language Modeling with nn.Transformer
class PositionalEncoding(nn.Module):

    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)


class TransformerModel(nn.Module):

    def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.5):
        super().__init__()
        self.model_type = 'Transformer'
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        encoder_layers = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers, enable_nested_tensor=False)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.linear.bias.data.zero_()
        self.linear.weight.data.uniform_(-initrange, initrange)

    def forward(self, src, src_mask=None):
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        if src_mask is None:
            src_mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        output = self.transformer_encoder(src, src_mask)
        output = self.linear(output)
        return output


torch.manual_seed(0)
ntokens = 20
model = TransformerModel(ntokens, 8, 2, 16, 2, 0.2)
print(model.pos_encoder.pe[:3, 0, :4])
print(nn.Transformer.generate_square_subsequent_mask(4))
data = torch.randint(0, ntokens, (60,))


def batchify(data, bsz):
    seq_len = data.size(0) // bsz
    data = data[:seq_len * bsz]
    data = data.view(bsz, seq_len).t().contiguous()
    return data


train_data = batchify(data, 4)
bptt = 5


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].reshape(-1)
    return data, target


criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
model.train()
for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
    data, targets = get_batch(train_data, i)
    output = model(data)
    output_flat = output.view(-1, ntokens)
    loss = criterion(output_flat, targets)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    print(batch, data.shape, loss.item(), math.exp(loss.item()))
scheduler.step()
print(scheduler.get_last_lr())
model.eval()
with torch.no_grad():
    data, targets = get_batch(train_data, 0)
    print(criterion(model(data).view(-1, ntokens), targets).item())
