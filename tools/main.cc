// tensorkit: convert, inspect, validate, concatenate and picture tensor files (see
// tools/README.md).
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <iostream>
#include <string>
#include <vector>

#include "tensorkit/common/file_util.h"
#include "tensorkit/common/parallel.h"
#include "tensorkit/tools/batch.h"
#include "tensorkit/tools/tool.h"

int main(int argc, char** argv) {
  using namespace tensorkit::tools;
  CLI::App app{
      "tensorkit: convert, inspect, validate, concatenate and picture tensor files and "
      "fit vocabularies (" +
      tensorkit::io::FormatList(".", ", ", ", ") +
      ").\nExit codes: 0 ok, 1 invalid input or failed, 2 usage error."};
  app.require_subcommand(1);
  int threads = 0;
  app.add_option("--threads", threads, "Worker threads (default: TENSORKIT_NUM_THREADS or all)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            int n = 0;
            auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
            if (ec == std::errc() && p == v.data() + v.size() && n >= 1) return "";
            return "the thread count must be a whole number of at least 1, got '" + v + "'";
          },
          "N >= 1"));
  std::vector<Subcommand> subs = {AddConvert(app), AddInfo(app), AddValidate(app),
                                  AddConcat(app),  AddSpy(app),  AddManifest(app),
                                  AddVocab(app)};
  // A signal ends a batch without leaving temporary files behind.
  tensorkit::io::RemoveTemporariesOnSignal();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A word that is no subcommand stays unparsed; name it rather than ask for a subcommand.
    std::vector<std::string> rest = app.remaining();
    if (!rest.empty() && rest[0][0] != '-' &&
        std::none_of(subs.begin(), subs.end(), [&](auto& s) { return s.app->parsed(); })) {
      std::string names;  // every subcommand, as the app knows them
      for (size_t i = 0; i < subs.size(); ++i) {
        if (i > 0) names += i + 1 == subs.size() ? " or " : ", ";
        names += subs[i].app->get_name();
      }
      std::cerr << "tensorkit: unknown subcommand '" << rest[0] << "'; use " << names
                << "\nRun with --help for more information.\n";
      return kExitUsage;
    }
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
