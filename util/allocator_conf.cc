// jemalloc's options for every executable of ours that links it
// (docs/adr/0007-jemalloc.md). jemalloc reads this symbol once, before its
// first allocation; MALLOC_CONF in the environment is applied after it and
// so still overrides it for one run.
//
// background_thread:true purges freed pages on jemalloc's own threads at the
// decay rate (10 s), instead of only when the arena that holds them
// allocates again. Soak run 4 (docs/reliability.md) saw resident memory
// grow while the allocated bytes stayed flat: arenas of threads that had
// gone quiet kept their freed pages.
extern "C" {
__attribute__((visibility("default"), used)) const char* malloc_conf =
    "background_thread:true";
}
