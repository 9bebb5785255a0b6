// cadclip-ingest-worker: `cadclip prepare-worker` alone, without LibTorch, for
// the Python module's read_cad and read_cad_many. The pool starts a worker per
// run (and per crashed file); this one loads Open CASCADE only, so it starts in
// a fraction of the time the full cadclip executable takes to load LibTorch.
// Arguments as the pool passes them: prepare-worker --parent PID.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "cadclip/cad/prepare.h"

int main(int argc, char** argv) {
  if (argc != 4 || std::strcmp(argv[1], "prepare-worker") != 0 ||
      std::strcmp(argv[2], "--parent") != 0) {
    std::fprintf(stderr,
                 "cadclip-ingest-worker is started by the cadclip Python module's ingest pool "
                 "(arguments: prepare-worker --parent PID), not by hand\n");
    return 2;
  }
  try {
    return cadclip::cad::run_prepare_worker(std::atoi(argv[3]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cadclip-ingest-worker: %s\n", e.what());
    return 1;
  }
}
