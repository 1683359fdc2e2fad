"""The foundation every layer may use: outcomes as data (``status``), numbers for JSON
(``jsonable``), the argument checks (``validate``) and the machine's memory (``memory``).
"""
from levysde.core.jsonable import finite_or_none, to_jsonable
from levysde.core.memory import available_memory
from levysde.core.status import Estimate, Flag, Status, unavailable, with_se
from levysde.core.validate import check_samples

__all__ = ['Status', 'Flag', 'Estimate', 'unavailable', 'with_se', 'check_samples', 'available_memory',
           'finite_or_none', 'to_jsonable']
