// tensorkit: convert, inspect, validate and concatenate tensor files (see tools/README.md).
#include <unistd.h>

#include <iostream>
#include <vector>

#include "tensorkit/common/parallel.h"
#include "tensorkit/tools/batch.h"
#include "tensorkit/tools/tool.h"

int main(int argc, char** argv) {
  using namespace tensorkit::tools;
  CLI::App app{
      "tensorkit: convert, inspect, validate and concatenate tensor files "
      "(.npy, .npz, .mtx, .tns).\nExit codes: 0 ok, 1 invalid input or failed, "
      "2 usage error."};
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "Worker threads (default: TENSORKIT_NUM_THREADS or all)")
      ->check(CLI::PositiveNumber);
  std::vector<Subcommand> subs = {AddConvert(app), AddInfo(app), AddValidate(app), AddConcat(app),
                                  AddManifest(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  try {
    if (threads > 0) tensorkit::SetNumThreads(threads);
    for (const Subcommand& s : subs) {
      if (s.app->parsed()) return s.run();
    }
  } catch (const UsageError& e) {
    std::cerr << "tensorkit: " << e.what() << "\nRun with --help for more information.\n";
    return kExitUsage;
  } catch (const tensorkit::Error& e) {
    std::cerr << "tensorkit: " << e.what() << "\n";
    return kExitFailed;
  } catch (const std::exception& e) {
    std::cerr << "tensorkit: " << e.what() << "\n";
    return kExitFailed;
  }
  return kExitUsage;
}
