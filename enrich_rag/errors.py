"""Errors a user can act on. Each message is one line naming the problem (file, line, key)."""


class EnrichRagError(Exception):
    """Base class: the CLI prints these as one line and exits non-zero."""


class ConfigError(EnrichRagError):
    pass


class InputDataError(EnrichRagError):
    pass


class StorageError(EnrichRagError):
    pass


class ModelLoadError(EnrichRagError):
    pass
