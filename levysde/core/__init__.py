"""The foundation every layer may use: outcomes as data (``status``), the argument checks
(``validate``), the machine's memory (``memory``) and the optional dependencies (``extras``).

Names load on first use (:mod:`lazy_loader`, SPEC 1 of Scientific Python).
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach(
    __name__,
    submod_attrs={
        "extras": ["EXTRAS", "MissingExtraError", "install_hint", "require"],
        "memory": ["available_memory"],
        "status": ["NOT_IDENTIFIED", "Estimate", "unavailable", "with_se"],
        "validate": ["check_samples"],
    },
)
