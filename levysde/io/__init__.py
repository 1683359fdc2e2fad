"""Files: atomic writes, the overwrite policy and locks (``files``), run files (``runfile``) and
the bounds of an archive checked before it is loaded (``archive``).

Names load on first use (:mod:`lazy_loader`, SPEC 1 of Scientific Python).
"""

import lazy_loader as lazy

__getattr__, __dir__, __all__ = lazy.attach(
    __name__,
    submod_attrs={
        "archive": ["MAX_DEFLATE_RATIO", "check_archive"],
        "files": [
            "LOCK_STALE_S",
            "STALE_TMP_S",
            "atomic_write",
            "check_output",
            "check_regular",
            "claim",
            "clean_stale_tmp",
            "lock_is_stale",
            "release",
            "umask",
        ],
        "runfile": ["REQUIRED_KEYS", "check_writable", "checkpoint_path", "load_run", "read_run", "save_run"],
    },
)
