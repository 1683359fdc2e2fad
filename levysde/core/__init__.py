"""The foundation every layer may use: outcomes as data (``status``), the argument checks
(``validate``) and the machine's memory (``memory``).
"""
from levysde.core.memory import available_memory
from levysde.core.status import NOT_IDENTIFIED, Estimate, unavailable, with_se
from levysde.core.validate import (
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_samples,
    describe_integers,
    describe_interval,
    in_interval,
)

__all__ = ['Estimate', 'unavailable', 'with_se', 'NOT_IDENTIFIED', 'check_real', 'check_int', 'check_choice',
           'check_bool', 'check_array', 'check_samples', 'describe_interval', 'describe_integers',
           'in_interval', 'available_memory']
