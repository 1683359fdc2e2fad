"""Files: atomic writes, the overwrite policy and locks (``files``), and run files (``runfile``).
"""
from levysde.io.files import (
    LOCK_STALE_S,
    STALE_TMP_S,
    atomic_write,
    check_output,
    check_regular,
    claim,
    clean_stale_tmp,
    lock_is_stale,
    release,
    umask,
)
from levysde.io.runfile import REQUIRED_KEYS, check_writable, checkpoint_path, load_run, read_run, save_run

__all__ = [
    'atomic_write', 'check_output', 'check_regular', 'umask', 'claim', 'release', 'lock_is_stale',
    'clean_stale_tmp', 'STALE_TMP_S', 'LOCK_STALE_S', 'REQUIRED_KEYS', 'save_run', 'read_run',
    'load_run', 'checkpoint_path', 'check_writable',
]
