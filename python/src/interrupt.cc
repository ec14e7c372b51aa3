// Ctrl-C during a long call (python.h's Interruptible): a SIGINT handler, installed only for the
// length of a call from the main thread, asks the library to stop (common/cancel.h) and passes
// the signal on to Python's own handler, which marks it pending as usual.
#include <Python.h>
#include <pythread.h>
#include <signal.h>

#include <cstring>

#include "python.h"

namespace tensorkit::python {
namespace {

unsigned long g_main_thread = 0;  // Python's main thread (only it runs Python signal handlers)
struct sigaction g_previous;      // the handler ours replaced, while ours is installed
int g_depth = 0;                  // nested scopes on the main thread (under the GIL)

extern "C" void OnSigint(int sig, siginfo_t* info, void* context) {
  RequestCancel();
  if (g_previous.sa_flags & SA_SIGINFO) {
    g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  }
}

}  // namespace

void InitInterrupt() {
  nb::object threading = nb::module_::import_("threading");
  g_main_thread = nb::cast<unsigned long>(threading.attr("main_thread")().attr("ident"));
}

SigintScope::SigintScope() {
  if (PyThread_get_thread_ident() != g_main_thread || g_depth > 0) return;
  struct sigaction current;
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  // SIG_DFL or SIG_IGN: Python does not handle SIGINT (signal.signal changed it); leave the
  // process's choice alone.
  const bool is_function = (current.sa_flags & SA_SIGINFO) ||
                           (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
  if (!is_function) return;
  g_previous = current;
  struct sigaction ours;
  std::memset(&ours, 0, sizeof(ours));
  ours.sa_sigaction = OnSigint;
  ours.sa_flags = SA_SIGINFO | (current.sa_flags & SA_ONSTACK);
  ours.sa_mask = current.sa_mask;
  if (sigaction(SIGINT, &ours, nullptr) != 0) return;
  installed_ = true;
  ++g_depth;
}

void SigintScope::End() {
  if (!installed_) return;
  installed_ = false;
  --g_depth;
  sigaction(SIGINT, &g_previous, nullptr);
  ClearCancel();  // after the restore: a later Ctrl-C goes to Python alone
}

}  // namespace tensorkit::python
