"""A trust-region Newton fit: retrograd gives scipy the gradient and
Hessian-vector products.

We fit a damped oscillation  y(t) = a * exp(-k t) * cos(w t + phi)  to noisy
samples. scipy's ``trust-ncg`` (trust region) and ``Newton-CG`` (line search) methods need three functions of the parameter
vector theta (a NumPy array):

- ``fun(theta)``: the loss (a float);
- ``jac(theta)``: its gradient, from ``rg.autograd.grad``;
- ``hessp(theta, v)``: the Hessian times a vector, from
  ``rg.autograd.functional.hvp`` (double backward: the Hessian itself is
  never formed).

Run: ``python examples/newton_fit.py``.
"""
import numpy as np
from scipy.optimize import minimize

import retrograd as rg
from retrograd.autograd.functional import hvp

TRUE = np.array([2.0, 0.3, 3.0, 0.5])        # a, k, w, phi


def make_data(n=200, noise=0.05, seed=0):
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 6.0, n)
    a, k, w, phi = TRUE
    y = a * np.exp(-k * t) * np.cos(w * t + phi) + noise * rng.standard_normal(n)
    return rg.tensor(t), rg.tensor(y)


def loss_fn(theta, t, y):
    """Mean squared error of the model with parameters theta (a 4-vector tensor)."""
    a, k, w, phi = theta                     # iterating gives four 0-d tensors, each differentiable
    pred = a * (-k * t).exp() * (w * t + phi).cos()
    return ((pred - y) ** 2).mean()


def main(start=(1.5, 0.5, 2.8, 0.2)):
    t, y = make_data()
    f = lambda th: loss_fn(th, t, y)          # noqa: E731  (a function of theta only)

    def fun(theta):
        return f(rg.tensor(theta)).item()

    def jac(theta):
        th = rg.tensor(theta, requires_grad=True)
        (g,) = rg.autograd.grad(f(th), th)
        return g.numpy()

    def hessp(theta, v):
        _, hv = hvp(f, rg.tensor(theta), rg.tensor(v))
        return hv.numpy()

    results = {}
    for method in ("trust-ncg", "Newton-CG"):      # a trust-region Newton, and a line-search one
        res = minimize(fun, np.asarray(start, dtype=float), jac=jac, hessp=hessp, method=method,
                       options={"gtol": 1e-10} if method == "trust-ncg" else {"xtol": 1e-12})
        results[method] = res
        print(f"{method}: {res.message}  ({res.nit} iterations, {res.nfev} losses, "
              f"{res.nhev} Hessian-vector products)")
        print("  fitted a, k, w, phi:", np.round(res.x, 4), "  true:", TRUE)
        print(f"  final loss {res.fun:.6f} (the noise variance is 0.0025); "
              f"gradient norm {np.linalg.norm(jac(res.x)):.1e}")

    # Cross-check: one Hessian-vector product against the full Hessian
    x = results["trust-ncg"].x
    H = rg.autograd.functional.hessian(f, rg.tensor(x)).numpy()
    v = np.arange(1.0, 5.0)
    print("hvp equals the full Hessian times v:", np.allclose(hessp(x, v), H @ v, rtol=1e-10, atol=1e-12))
    return results


if __name__ == "__main__":
    main()
