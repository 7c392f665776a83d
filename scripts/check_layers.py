"""Import layering of the package: every arrow points down (or within a room), none back up.

The logic lives in `enrich_rag/bench/check_layers.py`; `--help` lists the options."""

from enrich_rag.bench.check_layers import main

if __name__ == "__main__":
    raise SystemExit(main())
