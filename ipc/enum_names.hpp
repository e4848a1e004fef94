// The words for the values of an enum (audit events, spool directories,
// reason texts...): one table per enum and one lookup for all of them,
// instead of a switch per enum that each spell the same loop by hand.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace hb {

template <typename E>
struct Named {
    E value;
    std::string_view word;
};

template <typename E, std::size_t N>
struct NameTable {
    std::array<Named<E>, N> rows;
    std::string_view fallback;  // the word for a value outside the enum
};

// The table of a dense enum (values 0 to Last) from its words in declaration
// order. Built at compile time, which refuses a missing, extra or empty word.
template <auto Last, std::size_t N>
consteval NameTable<decltype(Last), N> dense_names(const char* const (&words)[N],
                                                   std::string_view fallback) {
    static_assert(N == static_cast<std::size_t>(Last) + 1, "one word per value of the enum");
    NameTable<decltype(Last), N> table{{}, fallback};
    for (std::size_t i = 0; i < N; ++i) {
        if (words[i][0] == '\0') throw "every value needs a word";
        table.rows[i] = {static_cast<decltype(Last)>(i), words[i]};
    }
    return table;
}

template <typename E, std::size_t N>
constexpr std::string_view name_of(const NameTable<E, N>& table, E value) {
    for (const Named<E>& row : table.rows) {
        if (row.value == value) return row.word;
    }
    return table.fallback;
}

template <typename E, std::size_t N>
constexpr std::optional<E> value_of(const NameTable<E, N>& table, std::string_view word) {
    for (const Named<E>& row : table.rows) {
        if (row.word == word) return row.value;
    }
    return std::nullopt;
}

}  // namespace hb
