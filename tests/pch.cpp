// The precompiled headers' own translation unit (tests/CMakeLists.txt): every
// test target reuses the headers it compiles once.
