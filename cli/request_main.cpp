// hostbridge-request-bin: `hostbridge request` on its own, for the tests
// and the benchmark until the admin tool links it. Same arguments.
#include "cli/request.hpp"

int main(int argc, char** argv) {
    return hb::cli::run_request(argc - 1, argv + 1);
}
