/* c_example: the spanprof C API from a C11 program.
 *
 * Checksums a few "records" of different sizes: each record is a span
 * `record.process` with its size as an argument, around two child spans,
 * `record.parse` and `record.checksum`; the work done is counted in
 * heartbeats. `record.checksum` is a "kernel" and names where it runs with
 * the key fields `backend`, `dtype` and `device` (spanprof_site_get_tagged),
 * which join the summary row's key. Run it with SPANPROF=1 to write a trace
 * and a summary:
 *
 *   SPANPROF=1 build/release/bin/c_example
 *
 * Exit codes: 0 done, 1 the outputs could not be written, 2 a bad SPANPROF*
 * environment variable.
 */
#include <spanprof/spanprof_c.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { kRecords = 8 };

static uint64_t Checksum(const unsigned char* data, size_t size) {
  uint64_t sum = 1469598103934665603u;
  for (size_t i = 0; i < size; ++i) {
    sum = (sum ^ data[i]) * 1099511628211u;
  }
  return sum;
}

int main(void) {
  if (spanprof_session_start_from_env("c_example.run") != SPANPROF_OK) {
    fprintf(stderr, "c_example: %s\n", spanprof_last_error());
    return 2;
  }
  spanprof_set_thread_name("main");
  /* Sites and keys: looked up once, kept for the whole run. */
  spanprof_site* process =
      spanprof_site_get("record.process", "process", "c_example", NULL);
  spanprof_site* parse = spanprof_site_get("record.parse", "parse", NULL, NULL);
  spanprof_site* checksum = spanprof_site_get_tagged(
      "record.checksum", &(spanprof_tags){.phase = "checksum",
                                          .activity = "hash",
                                          .backend = "scalar",
                                          .dtype = "u8",
                                          .device = "cpu0"});
  spanprof_key* bytes = spanprof_key_get("bytes");
  spanprof_key* ratio = spanprof_key_get("fill_ratio");
  spanprof_key* format = spanprof_key_get("format");
  static const char* const kFormats[4] = {"csv", "json", "tsv", "xml"};

  static unsigned char buffer[1 << 16];
  uint64_t total = 0;
  for (int r = 0; r < kRecords; ++r) {
    const size_t size = (size_t)4096 << (r % 4);
    spanprof_token record = spanprof_begin(process);
    spanprof_arg_int(bytes, (int64_t)size);

    spanprof_token span = spanprof_begin(parse);
    spanprof_arg_str(format, kFormats[r % 4]);
    for (size_t i = 0; i < size; ++i) {
      buffer[i] = (unsigned char)((i * 31u + (size_t)r) & 0xFFu);
    }
    spanprof_heartbeat(size / 1024);
    spanprof_end(span);

    span = spanprof_begin(checksum);
    spanprof_arg_double(ratio, (double)size / (double)sizeof(buffer));
    total ^= Checksum(buffer, size);
    spanprof_heartbeat(size / 1024);
    spanprof_end(span);

    spanprof_end(record);
  }
  printf("c_example: checksum %016llx of %d records\n",
         (unsigned long long)total, kRecords);

  if (spanprof_session_stop() != SPANPROF_OK) {
    fprintf(stderr, "c_example: %s\n", spanprof_last_error());
    return 1;
  }
  return 0;
}
