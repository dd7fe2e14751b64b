# %% exercise
# title: Adam 的第一步和预热：每个参数动多少
# time_limit: 3

# %% task
# ④ 第 3 步说：Adam 的第一步，每个参数都移动学习率那么多，和梯度大小无关；预热改的是开头这些步子的大小。亲手算一遍。写两个函数：
#
# - `adam_first_step(grads, lr)`：从 $m = v = 0$ 出发，Adam 走第一步时每个参数的改动（带正负号，先不管权重衰减）。$\beta_1 = 0.9$、$\beta_2 = 0.95$（我们的模型用的），$\epsilon = 10^{-8}$：$m = (1-\beta_1) g$，$v = (1-\beta_2) g^2$，偏差校正 $\hat m = m / (1-\beta_1)$、$\hat v = v / (1-\beta_2)$，改动是 $-\,\mathrm{lr} \cdot \hat m / (\sqrt{\hat v} + \epsilon)$。
# - `warmup_lr_sum(lr, warmup, n)`：线性预热时，第 $s$ 步（从 0 数起）的学习率是 $\mathrm{lr} \cdot (s+1) / \mathrm{warmup}$；返回前 $n$ 步学习率的和（$n$ 不超过 warmup）。
#
# 写对了，梯度 $(100, 0.001, -3)$、学习率 $10^{-3}$ 的第一步，三个参数都移动约 $10^{-3}$（前两个往下、第三个往上），梯度差了十万倍也一样；60 步预热的前 10 步，学习率加起来约 $9.2 \times 10^{-4}$，还不到不预热时的一步。检查还会换别的梯度、学习率和预热长度。

# %% starter
import math


def adam_first_step(grads, lr, beta1=0.9, beta2=0.95, eps=1e-8):
    out = []
    for g in grads:
        # 1. m、v 从 0 开始，各更新一次
        # 2. 偏差校正：m 除以 (1 - beta1)，v 除以 (1 - beta2)
        # 3. 改动 = -lr * m_hat / (sqrt(v_hat) + eps)
        ...
    return out


def warmup_lr_sum(lr, warmup, n):
    ...


print(adam_first_step([100.0, 0.001, -3.0], 1e-3))
print(warmup_lr_sum(1e-3, 60, 10))

# %% answer
import math


def adam_first_step(grads, lr, beta1=0.9, beta2=0.95, eps=1e-8):
    out = []
    for g in grads:
        m = (1 - beta1) * g
        v = (1 - beta2) * g * g
        m_hat = m / (1 - beta1)  # 就是 g
        v_hat = v / (1 - beta2)  # 就是 g 的平方
        out.append(-lr * m_hat / (math.sqrt(v_hat) + eps))
    return out


def warmup_lr_sum(lr, warmup, n):
    return sum(lr * (s + 1) / warmup for s in range(n))


print(adam_first_step([100.0, 0.001, -3.0], 1e-3))
print(warmup_lr_sum(1e-3, 60, 10))

# %% cases
import math


def step(grads, lr, b1=0.9, b2=0.95, eps=1e-8):
    """The reference first step (the same arithmetic as torch.optim.AdamW's, without decay)."""
    return [-lr * ((1 - b1) * g / (1 - b1)) / (math.sqrt((1 - b2) * g * g / (1 - b2)) + eps) for g in grads]


cases = [["step", [100.0, 0.001, -3.0], 1e-3], ["warm", 1e-3, 60, 10], ["step", [0.5, -0.5], 3e-4],
         ["warm", 1e-3, 60, 60]]
expected = [step([100.0, 0.001, -3.0], 1e-3), sum(1e-3 * (s + 1) / 60 for s in range(10)), step([0.5, -0.5], 3e-4),
            sum(1e-3 * (s + 1) / 60 for s in range(60))]


def unseen(rng):
    out = []
    for _ in range(6):
        grads = [rng.choice([-1, 1]) * 10 ** rng.uniform(-5, 3) for _ in range(rng.randint(1, 5))]
        out.append(["step", grads, rng.choice([1e-4, 3e-4, 1e-3, 3e-3])])
        warmup = rng.randint(5, 200)
        out.append(["warm", rng.choice([1e-4, 1e-3, 6e-4]), warmup, rng.randint(1, warmup)])
    return out

# %% check
defines = ["adam_first_step", "warmup_lr_sum"]


def result(you, case):
    if case[0] == "step":
        return you.adam_first_step(list(case[1]), case[2])
    return you.warmup_lr_sum(case[1], case[2], case[3])


def show(case):
    if case[0] == "step":
        return f"adam_first_step({case[1]}, {case[2]})"
    return f"warmup_lr_sum({case[1]}, {case[2]}, {case[3]})"

# %% hint
# 第一步时偏差校正正好抵消了 (1 - beta)：校正后的 m 就是梯度本身，校正后的 v 开根号就是梯度的绝对值。所以改动只剩学习率乘上梯度的正负号，梯度大小被约掉了。

# %% hint
# 预热的和是一个等差数列：每一步的学习率比上一步多 lr / warmup，把前 n 步的学习率逐个加起来即可，可以用 `sum(...)` 配一个 `for s in range(n)`。
