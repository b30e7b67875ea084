/* tick_path.h - marks the functions the node agent runs at every tick.
 *
 * The compiler puts a function marked hot in .text.hot, which the linker
 * lays out as one block: the tick's 25 KiB of code then sits on a few
 * pages, not spread over thirty between the code that runs once a job
 * or once a run.  The agent sleeps a second between ticks, and each page
 * it touches again costs a TLB walk on bare metal and, on a virtual
 * machine, microseconds (tests/bench/bench_wakeup).  Marked: what a
 * light tick runs with jobs held, from the timer's wake-up to the end of
 * the tick (callgrind of the running agent, doc/performance.md). */
#ifndef CEEMS_TICK_PATH_H
#define CEEMS_TICK_PATH_H

#if defined(__GNUC__)
#define CEEMS_TICK_PATH __attribute__((hot))
#else
#define CEEMS_TICK_PATH
#endif

#endif
