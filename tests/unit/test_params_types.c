/* base/params: parsing of each parameter type, every bad-value path and its
 * message, registration rules and rill_params_info. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "params_internal.h"
#include "rill/params.h"

#include "params_test_util.h"

/* rill_param_set with a value that must be refused: one error line naming the
 * parameter, the value, the source and `allowed`. */
static void expect_bad_set(const char *name, const char *value, const char *allowed)
{
    capture_begin();
    rill_status_t s = rill_param_set(name, value);
    const char *err = capture_end();
    CHECK(s == RILL_ERR_INVALID_ARG, "set %s='%s' gave %d", name, value, s);
    char quoted_name[128], quoted_value[128];
    snprintf(quoted_name, sizeof(quoted_name), "'%s'", name);
    snprintf(quoted_value, sizeof(quoted_value), "'%s'", value);
    CHECK(strstr(err, quoted_name), "message lacks the name %s: %s", name, err);
    CHECK(strstr(err, quoted_value), "message lacks the value '%s': %s", value, err);
    CHECK(strstr(err, allowed), "message lacks '%s': %s", allowed, err);
    CHECK(strstr(err, "rill_param_set"), "message lacks the source: %s", err);
    CHECK(strstr(err, "error"), "not an error line: %s", err);
    CHECK(count_lines(err) == 1, "expected one line, got: %s", err);
}

/* ------------------------------------------------------------ tests */

static void test_size(void)
{
    clean_env();
    rill_param_t *p = NULL;
    CHECK(rill_param_register_size("t_size", "a size", RILL_PARAM_LEVEL_USER, 1000, 0, UINT64_MAX,
                                   &p) == RILL_SUCCESS &&
              p,
          "register");
    CHECK(rill_param_get_size(p) == 1000, "default %" PRIu64, rill_param_get_size(p));
    static const struct {
        const char *text;
        uint64_t v;
    } good[] = {
        { "4096", 4096 },
        { "0", 0 },
        { "64k", 64 << 10 },
        { "64K", 64 << 10 },
        { "1M", 1 << 20 },
        { "3m", 3 << 20 },
        { "2G", UINT64_C(2) << 30 },
        { "2g", UINT64_C(2) << 30 },
        { "1t", UINT64_C(1) << 40 },
        { "5T", UINT64_C(5) << 40 },
        { "64kB", 64 << 10 },
        { "64KiB", 64 << 10 },
        { "1MiB", 1 << 20 },
        { "1 MiB", 1 << 20 },
        { "4096B", 4096 },
        { " 8k ", 8 << 10 },
        { "18446744073709551615", UINT64_MAX },
        { "16777215T", UINT64_C(16777215) << 40 },
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        rill_status_t s = rill_param_set("t_size", good[i].text);
        CHECK(s == RILL_SUCCESS, "'%s' refused (%d)", good[i].text, s);
        CHECK(rill_param_get_size(p) == good[i].v, "'%s' -> %" PRIu64 ", expected %" PRIu64,
              good[i].text, rill_param_get_size(p), good[i].v);
    }
    rill_param_set("t_size", "777");
    static const char *const bad[] = {
        "-1",        "+1",
        "abc",       "12x",
        "1.5G",      "",
        "k",         "64kk",
        "64P",       "1iB",
        "1 2",       "18446744073709551616",
        "16777216T", "99999999999999999999k",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        expect_bad_set("t_size", bad[i], "a size such as 4096, 64k or 1M");
        CHECK(rill_param_get_size(p) == 777, "'%s' changed the value to %" PRIu64, bad[i],
              rill_param_get_size(p));
    }

    /* a range */
    rill_param_t *r = NULL;
    CHECK(rill_param_register_size("t_size_range", "ranged", RILL_PARAM_LEVEL_USER, 64 << 10,
                                   4 << 10, 1 << 30, &r) == RILL_SUCCESS,
          "register ranged");
    CHECK(rill_param_set("t_size_range", "1G") == RILL_SUCCESS, "1G is the max");
    CHECK(rill_param_get_size(r) == 1 << 30, "1G");
    expect_bad_set("t_size_range", "2G", "in 4k..1G");
    expect_bad_set("t_size_range", "4095", "a size such as 4096, 64k or 1M");
    CHECK(rill_param_get_size(r) == 1 << 30, "kept 1G");
}

static void test_int(void)
{
    clean_env();
    rill_param_t *p = NULL;
    CHECK(rill_param_register_int("t_int", "an int", RILL_PARAM_LEVEL_USER, 8, 1, 64, &p) ==
              RILL_SUCCESS,
          "register");
    CHECK(rill_param_get_int(p) == 8, "default");
    CHECK(rill_param_set("t_int", "1") == RILL_SUCCESS && rill_param_get_int(p) == 1, "1");
    CHECK(rill_param_set("t_int", "64") == RILL_SUCCESS && rill_param_get_int(p) == 64, "64");
    CHECK(rill_param_set("t_int", " 32 ") == RILL_SUCCESS && rill_param_get_int(p) == 32, "32");
    static const char *const bad[] = { "0",    "65",  "-5",   "12abc", "abc",
                                       "",     "1e3", "0x10", "3.0",   "99999999999999999999",
                                       "64 64" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        expect_bad_set("t_int", bad[i], "an integer in 1..64");
        CHECK(rill_param_get_int(p) == 32, "'%s' changed the value", bad[i]);
    }

    rill_param_t *q = NULL;
    CHECK(rill_param_register_int("t_int_any", "", RILL_PARAM_LEVEL_USER, -3, INT64_MIN, INT64_MAX,
                                  &q) == RILL_SUCCESS,
          "register full range");
    CHECK(rill_param_get_int(q) == -3, "negative default");
    CHECK(rill_param_set("t_int_any", "-9223372036854775808") == RILL_SUCCESS &&
              rill_param_get_int(q) == INT64_MIN,
          "INT64_MIN");
    CHECK(rill_param_set("t_int_any", "9223372036854775807") == RILL_SUCCESS &&
              rill_param_get_int(q) == INT64_MAX,
          "INT64_MAX");
    expect_bad_set("t_int_any", "9223372036854775808", "an integer");
}

static void test_bool(void)
{
    clean_env();
    rill_param_t *p = NULL;
    CHECK(rill_param_register_bool("t_bool", "a bool", RILL_PARAM_LEVEL_USER, false, &p) ==
              RILL_SUCCESS,
          "register");
    CHECK(!rill_param_get_bool(p), "default false");
    static const char *const yes[] = { "1", "true", "TRUE", "yes", "Yes", "on", "ON" };
    static const char *const no[] = { "0", "false", "False", "no", "NO", "off", "Off" };
    for (size_t i = 0; i < 7; i++) {
        CHECK(rill_param_set("t_bool", yes[i]) == RILL_SUCCESS && rill_param_get_bool(p),
              "'%s' is true", yes[i]);
        CHECK(rill_param_set("t_bool", no[i]) == RILL_SUCCESS && !rill_param_get_bool(p),
              "'%s' is false", no[i]);
    }
    rill_param_set("t_bool", "yes");
    static const char *const bad[] = { "2", "yess", "", "y", "truee", "-1" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        expect_bad_set("t_bool", bad[i], "a boolean: 1/0/true/false/yes/no/on/off");
        CHECK(rill_param_get_bool(p), "'%s' changed the value", bad[i]);
    }
}

static void test_enum_string(void)
{
    clean_env();
    static const char *const scheds[] = { "lfq", "gpq", NULL };
    rill_param_t *e = NULL;
    CHECK(rill_param_register_enum("t_sched", "scheduler", RILL_PARAM_LEVEL_USER, scheds, "lfq",
                                   &e) == RILL_SUCCESS,
          "register enum");
    CHECK(rill_param_get_enum(e) == 0 && strcmp(rill_param_get_string(e), "lfq") == 0, "default");
    CHECK(rill_param_set("t_sched", "gpq") == RILL_SUCCESS, "gpq");
    CHECK(rill_param_get_enum(e) == 1 && strcmp(rill_param_get_string(e), "gpq") == 0, "is gpq");
    CHECK(rill_param_set("t_sched", "LFQ") == RILL_SUCCESS && rill_param_get_enum(e) == 0 &&
              strcmp(rill_param_get_string(e), "lfq") == 0,
          "case-insensitive, canonical name kept");
    expect_bad_set("t_sched", "pbq", "one of: lfq, gpq");
    expect_bad_set("t_sched", "", "one of: lfq, gpq");
    CHECK(rill_param_get_enum(e) == 0, "unchanged");

    rill_param_t *s = NULL;
    CHECK(rill_param_register_string("t_str", "a string", RILL_PARAM_LEVEL_USER, "abc", &s) ==
              RILL_SUCCESS,
          "register string");
    CHECK(strcmp(rill_param_get_string(s), "abc") == 0, "default");
    const char *old = rill_param_get_string(s);
    CHECK(rill_param_set("t_str", "hello world") == RILL_SUCCESS &&
              strcmp(rill_param_get_string(s), "hello world") == 0,
          "set string");
    CHECK(strcmp(old, "abc") == 0, "an old string stays readable");
    CHECK(rill_param_set("t_str", "") == RILL_SUCCESS && strcmp(rill_param_get_string(s), "") == 0,
          "empty string");

    rill_param_t *n = NULL;
    CHECK(rill_param_register_string("t_str_null", "", RILL_PARAM_LEVEL_USER, NULL, &n) ==
              RILL_SUCCESS,
          "NULL default");
    CHECK(rill_param_get_string(n) == NULL, "NULL default reads NULL");
}

/* Bad values from each loaded source, at registration: the message names that source;
 * the handle is still returned and reads the default. */
static void test_bad_at_registration(void)
{
    clean_env();
    char conf[512];
    snprintf(conf, sizeof(conf), "%s/bad.conf", tmpdir);
    FILE *f = fopen(conf, "w");
    fprintf(f, "# comment\n\nt_from_file = lots\n");
    fclose(f);
    setenv("RILL_MCA_param_files", conf, 1);
    setenv("RILL_MCA_t_from_env", "100", 1);
    char *args[] = { "prog", "--mca", "t_from_cmd", "maybe", NULL };
    int argc = 4;
    char **argv = args;
    CHECK(rill_params_load(&argc, &argv) == RILL_SUCCESS, "load");

    rill_param_t *p = NULL;
    capture_begin();
    rill_status_t s =
        rill_param_register_int("t_from_env", "", RILL_PARAM_LEVEL_USER, 8, 1, 64, &p);
    const char *err = capture_end();
    CHECK(s == RILL_ERR_INVALID_ARG, "env bad value: %d", s);
    CHECK(p != NULL && rill_param_get_int(p) == 8, "handle given, default kept");
    CHECK(strstr(err, "'t_from_env'") && strstr(err, "'100'") &&
              strstr(err, "environment RILL_MCA_t_from_env") && strstr(err, "an integer in 1..64"),
          "env message: %s", err);
    CHECK(count_lines(err) == 1, "one line: %s", err);
    rill_param_t *again = NULL;
    CHECK(rill_param_lookup("t_from_env", &again) == RILL_SUCCESS && again == p,
          "registered despite the bad value");

    p = NULL;
    capture_begin();
    s = rill_param_register_bool("t_from_cmd", "", RILL_PARAM_LEVEL_USER, true, &p);
    err = capture_end();
    CHECK(s == RILL_ERR_INVALID_ARG && p && rill_param_get_bool(p), "cmdline bad value");
    CHECK(strstr(err, "'t_from_cmd'") && strstr(err, "'maybe'") && strstr(err, "--mca") &&
              strstr(err, "a boolean: 1/0/true/false/yes/no/on/off"),
          "cmdline message: %s", err);

    p = NULL;
    capture_begin();
    s = rill_param_register_size("t_from_file", "", RILL_PARAM_LEVEL_USER, 4096, 0, UINT64_MAX, &p);
    err = capture_end();
    char where[700];
    snprintf(where, sizeof(where), "file %s:3", conf);
    CHECK(s == RILL_ERR_INVALID_ARG && p && rill_param_get_size(p) == 4096, "file bad value");
    CHECK(strstr(err, "'t_from_file'") && strstr(err, "'lots'") && strstr(err, where) &&
              strstr(err, "a size such as 4096, 64k or 1M"),
          "file message (want '%s'): %s", where, err);

    rill_param_info_t info;
    CHECK(rill_param_lookup("t_from_file", &p) == RILL_SUCCESS, "lookup");
    for (size_t i = 0; i < rill_params_count(); i++) {
        CHECK(rill_params_info(i, &info) == RILL_SUCCESS, "info %zu", i);
        CHECK(info.source == RILL_PARAM_SOURCE_DEFAULT, "%s: a refused value is not a source",
              info.name);
    }

    /* an enum from the environment */
    setenv("RILL_MCA_t_enum_env", "pbq", 1);
    /* a reload re-resolves the registered parameters: t_from_env is still bad */
    capture_begin();
    s = rill_params_load(NULL, NULL);
    err = capture_end();
    CHECK(s == RILL_ERR_INVALID_ARG && strstr(err, "'t_from_env'") && !strstr(err, "t_from_cmd"),
          "reload: %d %s", s, err);
    static const char *const scheds[] = { "lfq", "gpq", NULL };
    capture_begin();
    s = rill_param_register_enum("t_enum_env", "", RILL_PARAM_LEVEL_USER, scheds, "gpq", &p);
    err = capture_end();
    CHECK(s == RILL_ERR_INVALID_ARG && p && rill_param_get_enum(p) == 1, "enum env bad");
    CHECK(strstr(err, "'t_enum_env'") && strstr(err, "'pbq'") &&
              strstr(err, "environment RILL_MCA_t_enum_env") && strstr(err, "one of: lfq, gpq"),
          "enum message: %s", err);
    unsetenv("RILL_MCA_param_files");
}

static void test_registration_rules(void)
{
    clean_env();
    rill_param_t *p = NULL, *q = NULL;
    static const char *const bad_names[] = { "Sched", "a-b", "", "a b", "sched.x" };
    for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
        capture_begin();
        q = (rill_param_t *)&p; /* anything non-NULL */
        rill_status_t s = rill_param_register_int(bad_names[i], "", 1, 0, 0, 1, &q);
        const char *err = capture_end();
        CHECK(s == RILL_ERR_INVALID_ARG, "name '%s' accepted", bad_names[i]);
        CHECK(q == NULL, "name '%s': handle should be NULL", bad_names[i]);
        CHECK(strstr(err, "invalid parameter name"), "message: %s", err);
    }
    capture_begin();
    CHECK(rill_param_register_int(NULL, "", 1, 0, 0, 1, &q) == RILL_ERR_INVALID_ARG, "NULL name");
    capture_end();
    CHECK(rill_params_count() == 0, "nothing registered");

    CHECK(rill_param_register_int("t_same", "first", 1, 5, 0, 10, &p) == RILL_SUCCESS, "first");
    CHECK(rill_param_register_int("t_same", "second", 1, 7, 0, 10, &q) == RILL_SUCCESS && q == p,
          "same name, same type: same handle");
    CHECK(rill_param_get_int(q) == 5, "first registration's default stays");
    capture_begin();
    rill_status_t s = rill_param_register_bool("t_same", "", 1, false, &q);
    const char *err = capture_end();
    CHECK(s == RILL_ERR_INVALID_ARG && q == NULL, "same name, other type");
    CHECK(strstr(err, "'t_same'"), "message: %s", err);

    capture_begin();
    CHECK(rill_param_register_int("t_defbad", "", 1, 11, 0, 10, &q) == RILL_ERR_INVALID_ARG,
          "default out of range");
    CHECK(rill_param_register_size("t_defbad2", "", 1, 1, 2, 3, &q) == RILL_ERR_INVALID_ARG,
          "size default out of range");
    static const char *const vals[] = { "a", "b", NULL };
    CHECK(rill_param_register_enum("t_defbad3", "", 1, vals, "c", &q) == RILL_ERR_INVALID_ARG,
          "enum default not listed");
    static const char *const none[] = { NULL };
    CHECK(rill_param_register_enum("t_defbad4", "", 1, none, "a", &q) == RILL_ERR_INVALID_ARG,
          "enum without values");
    capture_end();
    CHECK(rill_param_lookup("t_defbad", &q) == RILL_ERR_NOT_FOUND, "not registered");

    /* set of an invalid name, and a NULL value */
    capture_begin();
    CHECK(rill_param_set("Bad", "1") == RILL_ERR_INVALID_ARG, "set invalid name");
    CHECK(rill_param_set("t_same", NULL) == RILL_ERR_INVALID_ARG, "set NULL value");
    capture_end();
    CHECK(rill_param_lookup("nope", &q) == RILL_ERR_NOT_FOUND, "lookup unknown");
}

static void test_info(void)
{
    clean_env();
    rill_param_t *p;
    static const char *const scheds[] = { "lfq", "gpq", NULL };
    rill_param_register_int("zz_int", "int help", RILL_PARAM_LEVEL_TUNER, 4, 1, 64, &p);
    rill_param_register_size("aa_size", "size help", RILL_PARAM_LEVEL_USER, 64 << 10, 0, UINT64_MAX,
                             &p);
    rill_param_register_enum("mm_enum", "enum help", RILL_PARAM_LEVEL_DEVELOPER, scheds, "lfq", &p);
    rill_param_register_bool("bb_bool", "bool help", RILL_PARAM_LEVEL_USER, true, &p);
    rill_param_register_string("cc_str", "str help", RILL_PARAM_LEVEL_USER, "x", &p);
    CHECK(rill_param_set("aa_size", "1M") == RILL_SUCCESS, "set");
    CHECK(rill_params_count() == 5, "count %zu", rill_params_count());
    static const char *const order[] = { "aa_size", "bb_bool", "cc_str", "mm_enum", "zz_int" };
    rill_param_info_t info;
    for (size_t i = 0; i < 5; i++) {
        CHECK(rill_params_info(i, &info) == RILL_SUCCESS, "info %zu", i);
        CHECK(strcmp(info.name, order[i]) == 0, "%zu: %s, expected %s", i, info.name, order[i]);
    }
    CHECK(rill_params_info(5, &info) == RILL_ERR_NOT_FOUND, "past the end");

    rill_params_info(0, &info);
    CHECK(info.type == RILL_PARAM_SIZE && strcmp(info.value, "1048576") == 0 &&
              strcmp(info.def, "65536") == 0 && info.source == RILL_PARAM_SOURCE_SET &&
              strcmp(info.help, "size help") == 0 && info.level == RILL_PARAM_LEVEL_USER,
          "size info: value %s def %s source %d", info.value, info.def, info.source);
    rill_params_info(1, &info);
    CHECK(strcmp(info.value, "true") == 0 && strcmp(info.allowed, "bool") == 0, "bool info %s %s",
          info.value, info.allowed);
    rill_params_info(3, &info);
    CHECK(strcmp(info.value, "lfq") == 0 && strcmp(info.allowed, "lfq|gpq") == 0 &&
              info.level == RILL_PARAM_LEVEL_DEVELOPER && info.source_detail == NULL,
          "enum info %s %s", info.value, info.allowed);
    rill_params_info(4, &info);
    CHECK(strcmp(info.value, "4") == 0 && strcmp(info.allowed, "1..64") == 0 &&
              strcmp(info.def, "4") == 0 && info.source == RILL_PARAM_SOURCE_DEFAULT,
          "int info %s %s %s", info.value, info.allowed, info.def);

    /* the mark that rill_init checks across ranks */
    CHECK(!info.same_on_all_ranks, "not marked same on all ranks unless asked");
    rill_param_t *marked = NULL;
    CHECK(rill_param_lookup(info.name, &marked) == RILL_SUCCESS && marked, "lookup %s", info.name);
    CHECK(rill_param_set_same_on_all_ranks(marked) == RILL_SUCCESS, "mark");
    rill_params_info(4, &info);
    CHECK(info.same_on_all_ranks, "marked same on all ranks");
    CHECK(rill_param_set_same_on_all_ranks(NULL) == RILL_ERR_INVALID_ARG, "mark NULL");

    CHECK(strcmp(rill_param_source_string(RILL_PARAM_SOURCE_DEFAULT), "default") == 0 &&
              strcmp(rill_param_source_string(RILL_PARAM_SOURCE_FILE), "file") == 0 &&
              strcmp(rill_param_source_string(RILL_PARAM_SOURCE_ENV), "env") == 0 &&
              strcmp(rill_param_source_string(RILL_PARAM_SOURCE_CMDLINE), "cmdline") == 0 &&
              strcmp(rill_param_source_string(RILL_PARAM_SOURCE_SET), "set") == 0,
          "source names");
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_size();
    test_int();
    test_bool();
    test_enum_string();
    test_bad_at_registration();
    test_registration_rules();
    test_info();
    rill_params_reset();
    return test_finish();
}
