"""The foundation every layer may use: outcomes as data (``status``), numbers for JSON
(``jsonable``), the argument checks (``validate``), the machine's memory (``memory``) and the
optional dependencies (``extras``).

Names load on first use (:mod:`lazy_loader`, SPEC 1 of Scientific Python).
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach(
    __name__,
    submod_attrs={
        "status": ["Status", "Flag", "Estimate", "unavailable", "with_se"],
        "jsonable": ["finite_or_none", "to_jsonable"],
        "validate": [
            "check_real",
            "check_int",
            "check_choice",
            "check_bool",
            "check_array",
            "check_samples",
            "describe_interval",
            "describe_integers",
            "in_interval",
        ],
        "memory": ["available_memory"],
        "extras": ["EXTRAS", "MissingExtraError", "install_hint", "require"],
    },
)
