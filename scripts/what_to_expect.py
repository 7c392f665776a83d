"""What a user should expect: build 100 documents, serve them warm, ask through the stream (timed).

The logic lives in `benchmarks/what_to_expect.py`; `--help` lists the options."""

import _repo  # noqa: F401  (benchmarks/ is not installed)

from benchmarks.what_to_expect import main

if __name__ == "__main__":
    raise SystemExit(main())
