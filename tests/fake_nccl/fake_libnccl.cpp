// A stand-in libnccl for the replay's loader tests (tests/nccl_support_test.cpp): it answers
// ncclGetVersion with FAKE_NCCL_VERSION (default 23007, "2.30.7") and exports a few of the functions
// the replay looks up, so the test can check which ones the loader finds missing. Nothing here runs a
// collective or says anything about real NCCL.
#include <cstdlib>

extern "C" {
int ncclGetVersion(int* version) {
  const char* v = std::getenv("FAKE_NCCL_VERSION");
  *version = v ? std::atoi(v) : 23007;
  return 0;
}
const char* ncclGetErrorString(int) { return "fake"; }
int ncclGroupStart() { return 0; }
int ncclGroupEnd() { return 0; }
// A 2.29+ call the real 2.28 headers lack: the loader must find it by name.
int ncclPutSignal() { return 0; }
}
