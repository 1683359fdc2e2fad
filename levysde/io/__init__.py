"""Files: atomic writes, the overwrite policy and locks (``files``), run files (``runfile``),
the bounds of an archive checked before it is loaded (``archive``), learnability files
(``learnfile``) and the anti-collapse paper's per-checkpoint time scales (``checkpoint_taus``).

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
        "checkpoint_taus": ["CKPT_TAU_PATTERN", "CheckpointTaus", "MAX_CHECKPOINTS", "MAX_UNITS",
                            "read_checkpoint_taus"],
        "learnfile": ["SUM_KEYS", "learnability_path", "read_learnability", "save_learnability"],
        "runfile": ["REQUIRED_KEYS", "check_writable", "checkpoint_path", "load_run", "read_run", "save_run"],
    },
)
