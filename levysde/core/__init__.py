"""The foundation every layer may use: outcomes as data (``status``), the argument checks
(``validate``), the machine's memory (``memory``) and the optional dependencies (``extras``).
"""
from levysde.core.memory import available_memory
from levysde.core.status import NOT_IDENTIFIED, Estimate, unavailable, with_se
from levysde.core.validate import check_samples

__all__ = ['Estimate', 'unavailable', 'with_se', 'NOT_IDENTIFIED', 'check_samples', 'available_memory']
