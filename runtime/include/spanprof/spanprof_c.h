/* spanprof/spanprof_c.h — the C API: spans, arguments, heartbeats, thread
 * names and sessions for C programs and for other languages through their
 * foreign function interface (Python's ctypes, Rust, Go's cgo, ...).
 *
 * Valid C11 (and C++: the declarations are `extern "C"`). The calls record
 * into the same process-wide runtime as the C++ API: a C span and a C++ span
 * of one thread nest, and one capture holds both. A span costs one
 * out-of-line call at its begin and one at its end around the C++ fast path
 * (1.07-1.14x `SPANPROF_SCOPE`; bench/gate checks it, target 1.2x;
 * docs/performance.md).
 *
 * Errors: the functions that can fail return a `spanprof_status`; the
 * message of the calling thread's last failure is `spanprof_last_error()`.
 * Nothing here aborts, throws or exits. The span functions cannot fail: with
 * no session they do nothing, and a span the cap refuses is counted as a
 * drop.
 *
 * Example:
 *
 *   #include <spanprof/spanprof_c.h>
 *
 *   int main(void) {
 *     if (spanprof_session_start_from_env("tool.run") != SPANPROF_OK) {
 *       fprintf(stderr, "%s\n", spanprof_last_error());
 *       return 2;
 *     }
 *     spanprof_site* parse = spanprof_site_get("file.parse", "parse", NULL,
 *                                              NULL);
 *     spanprof_key* bytes = spanprof_key_get("bytes");
 *     for (int i = 0; i < n; ++i) {
 *       spanprof_token span = spanprof_begin(parse);
 *       spanprof_arg_int(bytes, sizes[i]);
 *       Parse(i);
 *       spanprof_end(span);
 *     }
 *     if (spanprof_session_stop() != SPANPROF_OK) {
 *       fprintf(stderr, "%s\n", spanprof_last_error());
 *       return 1;
 *     }
 *     return 0;
 *   }
 */
#ifndef SPANPROF_SPANPROF_C_H_
#define SPANPROF_SPANPROF_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `spanprof_status` is the result of a call that can fail. The message of the
 * calling thread's last failure is `spanprof_last_error()`. */
typedef enum spanprof_status {
  SPANPROF_OK = 0,
  /* A bad configuration: a `SPANPROF*` environment variable (the message
   * names it), an output path template, the cap, the clock. */
  SPANPROF_ERROR_CONFIG = 1,
  /* A session conflict: one is already active in this process (C or C++),
   * no session of `spanprof_session_start_from_env()` is active to stop, or
   * the stop comes from another thread than the start. */
  SPANPROF_ERROR_SESSION = 2,
  /* The session ended and its capture was collected, but writing the trace
   * or the summary failed; the message names each path. */
  SPANPROF_ERROR_OUTPUT = 3,
  /* A null or empty name where one is required. */
  SPANPROF_ERROR_ARGUMENT = 4
} spanprof_status;

/* `spanprof_site` is a span's site: its name and tags (`phase`, `module`,
 * `activity`, `backend`, `dtype`, `device`), interned once. An opaque handle,
 * valid for the life of the process; share it freely between threads. */
typedef struct spanprof_site spanprof_site;

/* `spanprof_key` is an argument's key, interned once. Opaque, valid for the
 * life of the process, shareable between threads. */
typedef struct spanprof_key spanprof_key;

/* `spanprof_token` is what `spanprof_begin()` returns and `spanprof_end()`
 * takes. Opaque; 0 means the span is not recorded (no session). */
typedef uint64_t spanprof_token;

/* `spanprof_site_get()` returns the site for `name` and the tags (NULL or ""
 * for an unset tag). The strings are copied: they need not outlive the call,
 * and equal strings give the same site. Spans group by name + tags, like the
 * C++ sites (a C site and a `SPANPROF_SCOPE` with the same strings are one
 * summary row). Takes a process-wide mutex and allocates the first time a
 * name + tags is seen (each distinct one is kept for the life of the
 * process): call it once per call site and keep the handle, e.g. in a
 * `static` variable set at startup. Returns NULL when `name` is NULL or
 * empty (`spanprof_last_error()` says so), or when out of memory. Thread-safe;
 * not for the hot path. */
spanprof_site* spanprof_site_get(const char* name, const char* phase,
                                 const char* module, const char* activity);

/* `spanprof_tags` are the optional tags of a site, the C form of the C++
 * `spanprof::Tags`: `phase`, `module`, `activity`, and the key fields of work
 * that runs somewhere specific: `backend` (e.g. "cuda"), `dtype` (e.g.
 * "f16") and `device` (e.g. "gpu0"). NULL or "" leaves a tag unset. Write it
 * with designated initializers, which leave the fields not named NULL:
 *
 *   spanprof_site* matmul = spanprof_site_get_tagged(
 *       "kernel.matmul", &(spanprof_tags){.phase = "compute",
 *                                         .backend = "cuda",
 *                                         .dtype = "f16",
 *                                         .device = "gpu0"});
 *
 * The layout is part of the ABI and never changes: a later tag would come
 * with a new struct and a new function, not by growing this one. */
typedef struct spanprof_tags {
  const char* phase;
  const char* module;
  const char* activity;
  const char* backend;
  const char* dtype;
  const char* device;
} spanprof_tags;

/* `spanprof_site_get_tagged()` is `spanprof_site_get()` with all six tags:
 * it returns the site for `name` and `*tags` (`tags` NULL: every tag unset).
 * The strings are copied and interned by content exactly as
 * `spanprof_site_get()` does, in the same table: the two functions give the
 * same site for the same name + tags (`backend`, `dtype` and `device` unset),
 * and spans group by name + all six tags like the C++ sites (a C site and a
 * `SPANPROF_SCOPE("kernel.matmul", {.phase = "compute", .backend = "cuda"})`
 * with the same strings are one summary row). Returns NULL when `name` is
 * NULL or empty (`spanprof_last_error()` says so), or when out of memory.
 * Thread-safe; not for the hot path: look it up once and keep the handle. */
spanprof_site* spanprof_site_get_tagged(const char* name,
                                        const spanprof_tags* tags);

/* `spanprof_begin()` opens a span at `site` on the calling thread and returns
 * the token that `spanprof_end()` takes. Spans of one thread are ended in
 * reverse order of their begins (LIFO), on the thread that began them; a
 * span is the child of the span open on its thread when it begins. With no
 * session, or with `site` NULL, it returns 0 at the cost of one relaxed load.
 * Hot path: no lock, no allocation. */
spanprof_token spanprof_begin(spanprof_site* site);

/* `spanprof_end()` closes the span that `spanprof_begin()` returned `token`
 * for. Token 0 does nothing. A span still open when the session stops is
 * closed as `unfinished`; a token of an older session is ignored. Hot path. */
void spanprof_end(spanprof_token token);

/* `spanprof_key_get()` returns the argument key `name`, copied (it need not
 * outlive the call); equal names give the same key. Like `spanprof_site_get`:
 * once per call site, keep the handle. NULL when `name` is NULL or empty. */
spanprof_key* spanprof_key_get(const char* name);

/* `spanprof_arg_int()` / `spanprof_arg_double()` attach a numeric argument to
 * the innermost open span of the calling thread (`SPANPROF_ARG`): one
 * 32-byte side record, counted against the cap. No span open, no session or
 * `key` NULL: nothing is recorded. A non-finite double is written as null in
 * the trace. */
void spanprof_arg_int(const spanprof_key* key, int64_t value);
void spanprof_arg_double(const spanprof_key* key, double value);

/* `spanprof_arg_str()` attaches a string argument (`SPANPROF_ARG_STR`): up
 * to 64 bytes of `text` (NUL-terminated) are copied into the thread's side
 * buffer, no allocation; longer text is cut at a UTF-8 boundary and marked
 * truncated, invalid UTF-8 becomes U+FFFD. It takes 2-4 side records of the
 * cap's side budget. `spanprof_arg_strn()` takes `size` bytes, which need
 * no NUL. No span open, no session, `key` NULL or `text` NULL: nothing is
 * recorded. */
void spanprof_arg_str(const spanprof_key* key, const char* text);
void spanprof_arg_strn(const spanprof_key* key, const char* text, size_t size);

/* `spanprof_heartbeat()` adds `n` to the calling thread's heartbeat counter
 * (`spanprof::Heartbeat`): spans report the heartbeats between their begin
 * and end. A thread-local add. */
void spanprof_heartbeat(uint64_t n);

/* `spanprof_set_thread_name()` labels the calling thread in the trace and the
 * table (up to 63 bytes are copied; NULL clears it). Any time. */
void spanprof_set_thread_name(const char* name);

/* `spanprof_is_recording()` returns 1 while a session records, else 0. */
int spanprof_is_recording(void);

/* `spanprof_session_start_from_env()` starts a session configured by the
 * `SPANPROF*` environment variables (docs/api.md, "Environment") and opens its
 * root span `root` (copied) on the calling thread. With `SPANPROF` unset or
 * false it starts nothing and returns `SPANPROF_OK`: spans cost one load and
 * `spanprof_session_stop()` then does nothing. Prints the forecast line on
 * stderr unless `SPANPROF_QUIET`. Errors: `SPANPROF_ERROR_CONFIG` (nothing
 * started; the message names the variable), `SPANPROF_ERROR_SESSION` (a
 * session is already active). At `exit()` a session still open is finished
 * normally: the spans open then are flagged `open_at_exit`, the capture is
 * complete and its `end_reason` is "exit". */
spanprof_status spanprof_session_start_from_env(const char* root);

/* `spanprof_session_stop()` ends the session: closes the root span, collects,
 * writes the trace and the summary to the configured paths, and prints the
 * table on stdout unless `SPANPROF_QUIET` (what `spanprof::Profile` does at
 * its end). Call it on the thread that started the session, after ending the
 * spans it opened (still open ones are closed as `unfinished`). Returns
 * `SPANPROF_OK` (also after a disabled start), `SPANPROF_ERROR_OUTPUT` when
 * writing failed (the session is over either way; the library prints
 * nothing, the caller reports `spanprof_last_error()`), or
 * `SPANPROF_ERROR_SESSION` when no session that
 * `spanprof_session_start_from_env()` started is active (a C++ `Profile`'s
 * session is never stopped from here) or the thread is not the one that
 * started it (nothing changes). */
spanprof_status spanprof_session_stop(void);

/* `spanprof_last_error()` returns the message of the calling thread's last
 * failed call ("" when none failed). The string stays valid until the
 * thread's next failing call; copy it to keep it. */
const char* spanprof_last_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPANPROF_SPANPROF_C_H_ */
