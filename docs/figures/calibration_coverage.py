"""Coverage of the error bars of `levysde check` on the calibration study, with the target bands.

    python docs/figures/calibration_coverage.py OUT.png

The coverages and their Wilson 95 % intervals are those of the full study (416 synthetic data
sets with known truth), measured by ``python benchmarks/calibrate_check.py --json``
(``coverage_1sigma``, ``coverage_2sigma``, ``coverage_n``, ``coverage_ci95``) and tabulated on
docs/calibration.md, "Results"; the study takes minutes, so the figure draws its output.
"""
import sys

from levysde.plotting import pyplot, save_figure

#: estimate -> (n, (1σ coverage, lo, hi), (2σ coverage, lo, hi))
STUDY = {
    r"$\hat\kappa$ (log scale)": (279, (0.681, 0.62, 0.73), (0.950, 0.92, 0.97)),
    r"$\hat\alpha$": (51, (0.667, 0.53, 0.78), (0.961, 0.87, 0.99)),
    r"$\hat\beta_{\mathrm{tail}}$": (336, (0.634, 0.58, 0.68), (0.917, 0.88, 0.94)),
}
TARGETS = {1: (0.60, 0.75), 2: (0.90, 0.98)}


def main(out: str) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.4), sharey=True)
    names = list(STUDY)
    for ax, k in zip(axes, (1, 2), strict=True):
        lo, hi = TARGETS[k]
        ax.axvspan(lo, hi, color="tab:green", alpha=0.15, label="target band")
        ax.axvline({1: 0.667, 2: 0.936}[k], color="k", ls=":", lw=1, label=r"exact ($t_{15}$)")
        for i, name in enumerate(names):
            n, c1, c2 = STUDY[name]
            c, a, b = c1 if k == 1 else c2
            ax.errorbar(c, i, xerr=[[c - a], [b - c]], fmt="o", color="tab:blue", capsize=3)
            ax.annotate(f"n = {n}", (b, i), xytext=(4, 0), textcoords="offset points", va="center", fontsize=8)
        ax.set_xlim((0.45, 0.85) if k == 1 else (0.80, 1.0))
        ax.set_title(rf"$\pm {k}$ standard error{'s' if k == 2 else ''}", fontsize=10)
        ax.set_xlabel("coverage (Wilson 95 % interval)")
    axes[0].set_yticks(range(len(names)), names)
    axes[0].set_ylim(-0.6, len(names) - 0.4)
    axes[1].legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    save_figure(fig, out)


if __name__ == "__main__":
    main(sys.argv[1])
