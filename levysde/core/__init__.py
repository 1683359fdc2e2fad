"""The foundation every layer may use: outcomes as data (``status``), the argument checks
(``validate``) and the machine's memory (``memory``).

Names load on first use (:mod:`lazy_loader`, SPEC 1 of Scientific Python).
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach(
    __name__,
    submod_attrs={
        "memory": ["available_memory"],
        "status": ["NOT_IDENTIFIED", "Estimate", "unavailable", "with_se"],
        "validate": ["check_samples"],
    },
)
