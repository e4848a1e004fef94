// Deterministic generator of request files (name and body) for the property
// tests: valid requests for every verb, requests that break one rule, and
// hostile ones (injection attempts in verb and arg, hardcoded-deny verbs,
// duplicate keys, byte-order marks, NUL bytes, invalid UTF-8, trailing bytes,
// oversize bodies, random mutations of a valid body, off-schema names).
#pragma once

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/support/utc.hpp"

namespace hb::test {

struct GeneratedRequest {
    std::string name;  // never contains '/' or NUL: it can be created in requests/
    std::string body;
};

class RequestGenerator {
  public:
    RequestGenerator(std::uint64_t seed, std::vector<std::string> services, std::time_t now)
        : rng_(seed), services_(std::move(services)), now_(now) {}

    // Weights in percent of what next() produces; the rest is hostile.
    struct Mix {
        int ping = 10;
        int valid = 35;    // a valid request of any other verb
        int invalid = 25;  // well-formed, one rule broken
    };

    GeneratedRequest next(const Mix& mix) {
        const int roll = static_cast<int>(pick(100));
        if (roll < mix.ping) return finish("ping", valid_body("ping"));
        if (roll < mix.ping + mix.valid) {
            const std::string verb = pick_of(kVerbs);
            return finish(verb, valid_body(verb));
        }
        if (roll < mix.ping + mix.valid + mix.invalid) return invalid();
        return hostile();
    }

    // What a valid body of `verb` needs as its arg ("" for none).
    static bool takes_arg(const std::string& verb) {
        return verb == "logs" || verb == "restart" || verb == "rebuild";
    }

  private:
    static inline const std::vector<std::string> kVerbs = {
        "ping", "status",  "health",  "logs", "up",
        "down", "restart", "rebuild", "init", "join-network"};
    static inline const std::vector<std::string> kHostileVerbs = {
        "exec",     "reset-db",     "shell",     "shell-web", "shellx",   "restart-all",
        "Restart",  "restart ",     "restart\n", "sh",        "bash",     "status;id",
        "$(id)",    "`id`",         "../stack",  "/bin/sh",   "RESTART",  "join_network",
        "rebuild-", "status\u00e9", "",          "-c",        "shell:web"};
    static inline const std::vector<std::string> kHostileArgs = {
        "api; rm -rf /", "$(id)",   "`id`",     "../api", "api\n",
        "api ",          " api",    "API",      "1api",   "-f",
        "--force",       "api/web", "a\"pi",    "api\\",  "*",
        "api,db",        "api db",  "\u0430pi", "",       "-",
        "_api",          "apix",    "dbx",      "web1",   "--",
        "api\tdb"};

    std::size_t pick(std::size_t n) {
        return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
    }
    bool chance(int percent) { return static_cast<int>(pick(100)) < percent; }
    template <typename T>
    const T& pick_of(const std::vector<T>& v) {
        return v[pick(v.size())];
    }

    std::string rfc3339(std::time_t t) const {
        std::tm tm{};
        ::gmtime_r(&t, &tm);
        char buf[32];
        std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
        return buf;
    }

    std::string service_arg(const std::string& verb) {
        // rebuild also gets the services it refuses (db is not buildable).
        (void)verb;
        return pick_of(services_);
    }

    std::string valid_body(const std::string& verb) {
        nlohmann::ordered_json b;
        b["verb"] = verb;
        if (takes_arg(verb)) b["arg"] = service_arg(verb);
        b["requested_at"] = rfc3339(now_ - static_cast<std::time_t>(pick(60)));
        if (chance(50)) {  // key order does not matter
            nlohmann::ordered_json r;
            r["requested_at"] = b["requested_at"];
            if (b.contains("arg")) r["arg"] = b["arg"];
            r["verb"] = verb;
            b = r;
        }
        return b.dump() + (chance(20) ? "\n" : "");
    }

    // Well-formed JSON, one rule broken.
    GeneratedRequest invalid() {
        const std::string verb = pick_of(kVerbs);
        nlohmann::ordered_json b = nlohmann::ordered_json::parse(valid_body(verb));
        switch (pick(12)) {
            case 0:
                b.erase("verb");
                break;
            case 1:
                b.erase("requested_at");
                break;
            case 2:
                b["extra"] = "x";
                break;
            case 3:
                b["verb"] = pick(2) ? nlohmann::ordered_json(7) : nlohmann::ordered_json::array();
                break;
            case 4:
                b["arg"] = takes_arg(verb) ? nlohmann::ordered_json(nullptr)
                                           : nlohmann::ordered_json("api");
                break;
            case 5:
                if (takes_arg(verb)) {
                    b.erase("arg");
                } else {
                    b["arg"] = pick_of(services_);
                }
                break;
            case 6:
                b["arg"] = pick_of(kHostileArgs);
                break;
            case 7: {
                static const std::vector<std::string> bad = {"2026-11-29T08:00:00.5Z",
                                                             "2026-11-29T08:00:00+00:00",
                                                             "2026-11-29 08:00:00Z",
                                                             "2026-02-30T08:00:00Z",
                                                             "2026-11-29T24:00:00Z",
                                                             "2026-11-29t08:00:00z",
                                                             "now",
                                                             "",
                                                             "1764403200"};
                b["requested_at"] = pick_of(bad);
                break;
            }
            case 8:  // expired or in the future: refused by the executor
                b["requested_at"] = rfc3339(pick(2) ? now_ - 100000 : now_ + 100000);
                break;
            case 9:
                return finish(verb, "");  // the jq client bug
            case 10: {
                // Verb in the name differs from the body's.
                std::string other = pick_of(kVerbs);
                if (other == verb) other = verb == "status" ? "health" : "status";
                return finish(other, b.dump());
            }
            default:
                b = nlohmann::ordered_json::array({b});
                break;
        }
        return finish(verb, b.dump());
    }

    GeneratedRequest hostile() {
        const std::string verb = pick_of(kVerbs);
        const std::string valid = valid_body(verb);
        switch (pick(14)) {
            case 0:
            case 1: {
                const std::string hv = pick_of(kHostileVerbs);
                nlohmann::ordered_json b;
                b["verb"] = hv;
                if (chance(50)) b["arg"] = pick_of(services_);
                b["requested_at"] = rfc3339(now_);
                return finish(name_verb(hv),
                              b.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
            }
            case 2: {
                nlohmann::ordered_json b = nlohmann::ordered_json::parse(valid);
                b["arg"] = pick_of(kHostileArgs);
                return finish(verb, b.dump());
            }
            case 3:  // duplicate key, the second one more dangerous
                return finish("status",
                              "{\"verb\":\"status\",\"verb\":\"restart\",\"arg\":\"api\","
                              "\"requested_at\":\"" +
                                  rfc3339(now_) + "\"}");
            case 4:
                return finish(verb, "\xEF\xBB\xBF" + valid);
            case 5: {
                std::string b = valid;
                b.insert(pick(b.size()), 1, '\0');
                return finish(verb, b);
            }
            case 6: {
                std::string b = valid;
                b.insert(pick(b.size()), 1, static_cast<char>(0x80 + pick(0x80)));
                return finish(verb, b);
            }
            case 7:
                return finish(verb, valid + (chance(50) ? "{}" : "\n\n"));
            case 8:  // oversize: a valid object padded with blanks
                return finish(verb,
                              valid.substr(0, valid.size() - 1) + std::string(4100, ' ') + "}");
            case 9: {
                std::string b;
                const std::size_t n = pick(64);
                for (std::size_t i = 0; i < n; ++i) b += static_cast<char>(pick(256));
                return finish(verb, b);
            }
            case 10:
            case 11: {  // mutate a valid body: flip, insert or delete bytes
                std::string b = valid;
                const std::size_t edits = 1 + pick(4);
                for (std::size_t i = 0; i < edits && !b.empty(); ++i) {
                    const std::size_t at = pick(b.size());
                    switch (pick(3)) {
                        case 0:
                            b[at] = static_cast<char>(b[at] ^ (1 << pick(8)));
                            break;
                        case 1:
                            b.insert(at, 1, "\"{}[]:,\\ a0"[pick(11)]);
                            break;
                        default:
                            b.erase(at, 1);
                    }
                }
                return finish(verb, b);
            }
            case 12: {  // escapes that decode to a valid verb, and a deep nest
                if (chance(50)) {
                    return finish("restart",
                                  "{\"verb\":\"\\u0072estart\",\"arg\":\"\\u0061pi\","
                                  "\"requested_at\":\"" +
                                      rfc3339(now_) + "\"}");
                }
                return finish(verb, std::string(200, '[') + std::string(200, ']'));
            }
            default:
                return off_schema_name(valid);
        }
    }

    GeneratedRequest off_schema_name(const std::string& body) {
        const std::string good = on_schema_name("status");
        std::string name;
        switch (pick(8)) {
            case 0:
                name = "20261129T080000Z-Status-" + nonce() + ".json";
                break;
            case 1:
                name = "20261129T080000Z-shell:web-" + nonce() + ".json";
                break;
            case 2:
                name = good.substr(0, good.size() - 5);  // no .json
                break;
            case 3:
                name = good + ".tmp";
                break;
            case 4:
                name = "." + good;
                break;
            case 5:
                name = "2026-11-29T08:00:00Z-status-" + nonce() + ".json";
                break;
            case 6:
                name = good.substr(0, 17) + "status-" + nonce().substr(1) + ".json";
                break;
            default:
                name = "20261129T080000Z-st\xC3\xA4tus-" + nonce() + ".json";
                break;
        }
        return {name, body};
    }

    // The name's verb must fit [a-z-]+; a hostile verb that does not gets a
    // plain one (the body's verb then mismatches, or the name is off-schema).
    static std::string name_verb(const std::string& verb) {
        if (verb.empty()) return "status";
        for (char c : verb) {
            if (!((c >= 'a' && c <= 'z') || c == '-')) return "status";
        }
        return verb;
    }

    std::string nonce() {
        char buf[17];
        std::snprintf(buf, sizeof buf, "%08x%08x", static_cast<unsigned>(++counter_),
                      static_cast<unsigned>(rng_() & 0xffffffffU));
        return buf;
    }

    std::string on_schema_name(const std::string& verb) {
        // Stamps grow with the counter, so files sort in generation order.
        const std::time_t t = now_ - 86400 + static_cast<std::time_t>(counter_ + 1);
        return utc(t, false) + "-" + verb + "-" + nonce() + ".json";
    }

    GeneratedRequest finish(const std::string& verb, std::string body) {
        return {on_schema_name(verb), std::move(body)};
    }

    std::mt19937_64 rng_;
    std::vector<std::string> services_;
    std::time_t now_;
    std::uint64_t counter_ = 0;
};

}  // namespace hb::test
