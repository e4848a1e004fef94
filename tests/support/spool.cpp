#include "tests/support/spool.hpp"

#include <filesystem>
#include <thread>

#include "tests/support/files.hpp"

namespace hb::test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void publish_response(const std::string& spool, const std::string& request,
                      const std::string& body) {
    const std::string temp = spool + "/tmp/.response-" + request;
    write_file(temp, body);
    fs::rename(temp, spool + "/responses/" + request + ".response.json");
}

std::string wait_for_json(const std::string& dir, std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    for (;;) {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            std::string name = entry.path().filename().string();
            if (name.size() > 5 && name.ends_with(".json")) return name;
        }
        if (Clock::now() >= deadline) return "";
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

}  // namespace hb::test
