#!/bin/sh
# The kernels archive's AVX-512 objects (x86/avx512_*.cpp) may define no symbol but their
# fill_avx512_* entry points: any other definition with external or vague linkage (an inline
# helper, a std template instantiation) could be the copy the linker keeps for every caller,
# and an AVX2-only CPU would then run AVX-512 instructions. (DW.ref.__gxx_personality_v0 is
# the unwinder's pointer to the C++ personality routine, data that every object with cleanups
# shares, no code.) Usage: avx512_symbols.sh ARCHIVE
set -eu
archive=$1
members=$(nm -A --defined-only "$archive" | grep -c 'avx512_[a-z0-9_]*\.cpp\.o:' || true)
if [ "$members" -eq 0 ]; then
  echo "no avx512_ object in $archive" >&2
  exit 1
fi
bad=$(nm -A -C --defined-only "$archive" | grep 'avx512_[a-z0-9_]*\.cpp\.o:' |
  awk '$2 ~ /^[TWVBDRuvw]$/' | grep -v 'cohort::kernels::fill_avx512_' |
  grep -v ' DW\.ref\.__gxx_personality_v0$' || true)
if [ -n "$bad" ]; then
  echo "AVX-512 objects define symbols other code could bind to:" >&2
  echo "$bad" >&2
  exit 1
fi
echo "avx512 objects: only fill_avx512_* defined"
