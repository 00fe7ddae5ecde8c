/* base/params: the value sources (files, environment, --mca, rill_param_set),
 * their precedence, argv editing, file errors, reloads and unknown-name warnings. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "params_internal.h"
#include "rill/params.h"

#include "params_test_util.h"

/* Like clean_env, also removing the home configuration file. */
static void clean_env_home(void)
{
    clean_env();
    char home_conf[512];
    snprintf(home_conf, sizeof(home_conf), "%s/.rill/mca-params.conf", tmpdir);
    unlink(home_conf);
}

/* Write text to <tmpdir>/<name>; path_p gets the full path. */
static void write_file(const char *name, const char *text, char *path_p, size_t n)
{
    snprintf(path_p, n, "%s/%s", tmpdir, name);
    FILE *f = fopen(path_p, "w");
    if (!f) {
        perror(path_p);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static rill_param_info_t info_of(const char *name)
{
    rill_param_info_t info;
    memset(&info, 0, sizeof(info));
    for (size_t i = 0; i < rill_params_count(); i++) {
        rill_params_info(i, &info);
        if (strcmp(info.name, name) == 0)
            return info;
    }
    printf("FAIL: no info for %s\n", name);
    failures++;
    return info;
}

/* ------------------------------------------------------------ tests */

/* default 1 < file 2 < env 3 < cmdline 4 < set 5: all present, then the strongest
 * removed one at a time. */
static void test_precedence(void)
{
    char conf[512];
    for (int present = 4; present >= 0; present--) {
        clean_env_home();
        if (present >= 1) {
            write_file("prec.conf", "prec = 2\n", conf, sizeof(conf));
            setenv("RILL_MCA_param_files", conf, 1);
        }
        if (present >= 2)
            setenv("RILL_MCA_prec", "3", 1);
        char *args[] = { "prog", "--mca", "prec", "4", NULL };
        int argc = present >= 3 ? 4 : 1;
        char **argv = args;
        if (present >= 4)
            CHECK(rill_param_set("prec", "5") == RILL_SUCCESS, "set before load");
        CHECK(rill_params_load(&argc, &argv) == RILL_SUCCESS, "load");
        CHECK(argc == 1 && argv[1] == NULL, "argv: %d", argc);
        rill_param_t *p = NULL;
        CHECK(rill_param_register_int("prec", "", 1, 1, 0, 10, &p) == RILL_SUCCESS, "register");
        CHECK(rill_param_get_int(p) == present + 1, "%d sources: value %" PRId64, present,
              rill_param_get_int(p));
        rill_param_info_t info = info_of("prec");
        CHECK((int)info.source == present, "%d sources: source %d", present, info.source);
        char file_detail[700];
        snprintf(file_detail, sizeof(file_detail), "%s:1", conf);
        const char *detail = present == 1   ? file_detail
                             : present == 2 ? "RILL_MCA_prec"
                             : present == 3 ? "--mca"
                                            : NULL;
        CHECK((detail == NULL && info.source_detail == NULL) ||
                  (detail && info.source_detail && strcmp(detail, info.source_detail) == 0),
              "%d sources: detail %s", present, info.source_detail ? info.source_detail : "NULL");
    }
    /* set after registration wins over everything and is kept by a reload */
    clean_env_home();
    setenv("RILL_MCA_prec", "3", 1);
    CHECK(rill_params_load(NULL, NULL) == RILL_SUCCESS, "load");
    rill_param_t *p = NULL;
    rill_param_register_int("prec", "", 1, 1, 0, 10, &p);
    CHECK(rill_param_get_int(p) == 3, "env");
    CHECK(rill_param_set("prec", "6") == RILL_SUCCESS && rill_param_get_int(p) == 6, "set");
    CHECK(info_of("prec").source == RILL_PARAM_SOURCE_SET, "source set");
    CHECK(rill_params_load(NULL, NULL) == RILL_SUCCESS && rill_param_get_int(p) == 6,
          "set survives a reload");
}

/* $HOME/.rill/mca-params.conf, then RILL_MCA_param_files in order; later lines win. */
static void test_files(void)
{
    clean_env_home();
    char dir[512], home_conf[600], a[512], b[512], list[1100];
    snprintf(dir, sizeof(dir), "%s/.rill", tmpdir);
    mkdir(dir, 0700);
    snprintf(home_conf, sizeof(home_conf), "%s/mca-params.conf", dir);
    FILE *f = fopen(home_conf, "w");
    fputs("f_x = 1\nf_y = 1\n", f);
    fclose(f);
    write_file("a.conf",
               "# a comment\n"
               "\n"
               "   f_x=2\n"
               "f_z = 2   # trailing comment\n"
               "f_w = first\n"
               "f_w = second value\n"
               "f_e =\n",
               a, sizeof(a));
    write_file("b.conf", "\tf_z\t=\t3\t\n", b, sizeof(b));
    snprintf(list, sizeof(list), "%s::%s", a, b);
    setenv("RILL_MCA_param_files", list, 1);
    CHECK(rill_params_load(NULL, NULL) == RILL_SUCCESS, "load");
    rill_param_t *x, *y, *z, *w, *e;
    rill_param_register_int("f_x", "", 1, 0, 0, 9, &x);
    rill_param_register_int("f_y", "", 1, 0, 0, 9, &y);
    rill_param_register_int("f_z", "", 1, 0, 0, 9, &z);
    rill_param_register_string("f_w", "", 1, "", &w);
    rill_param_register_string("f_e", "", 1, "def", &e);
    CHECK(rill_param_get_int(x) == 2, "a.conf over home: %" PRId64, rill_param_get_int(x));
    CHECK(rill_param_get_int(y) == 1, "home file: %" PRId64, rill_param_get_int(y));
    CHECK(rill_param_get_int(z) == 3, "b.conf over a.conf: %" PRId64, rill_param_get_int(z));
    CHECK(strcmp(rill_param_get_string(w), "second value") == 0, "last line wins: '%s'",
          rill_param_get_string(w));
    CHECK(strcmp(rill_param_get_string(e), "") == 0, "empty value: '%s'", rill_param_get_string(e));
    char detail[700];
    snprintf(detail, sizeof(detail), "%s:1", b);
    rill_param_info_t info = info_of("f_z");
    CHECK(info.source == RILL_PARAM_SOURCE_FILE && info.source_detail &&
              strcmp(info.source_detail, detail) == 0,
          "detail %s", info.source_detail ? info.source_detail : "NULL");
    snprintf(detail, sizeof(detail), "%s:2", home_conf);
    info = info_of("f_y");
    CHECK(info.source_detail && strcmp(info.source_detail, detail) == 0, "home detail %s",
          info.source_detail ? info.source_detail : "NULL");
    CHECK(rill_params_warn_unknown() == 0, "RILL_MCA_param_files is not an unknown parameter");
    unlink(home_conf);
}

static void test_file_errors(void)
{
    clean_env_home();
    char bad[512], missing[512], list[1100];
    write_file("bad.conf",
               "ok_a = 1\n"
               "# fine\n"
               "just some words\n"
               "ok_b = 2\n"
               "Bad_Name = 3\n"
               " = 4\n",
               bad, sizeof(bad));
    snprintf(missing, sizeof(missing), "%s/does_not_exist.conf", tmpdir);
    setenv("RILL_MCA_param_files", bad, 1);
    setenv("RILL_MCA_ok_c", "5", 1);
    capture_begin();
    rill_status_t s = rill_params_load(NULL, NULL);
    const char *err = capture_end();
    CHECK(s == RILL_ERR_IO, "malformed file: %d", s);
    char where[700];
    for (int line = 3; line <= 6; line++) {
        if (line == 4)
            continue;
        snprintf(where, sizeof(where), "%s:%d", bad, line);
        CHECK(strstr(err, where), "no '%s' in: %s", where, err);
    }
    snprintf(where, sizeof(where), "%s:4", bad);
    CHECK(!strstr(err, where), "line 4 is fine: %s", err);
    CHECK(strstr(err, "just some words"), "the line is quoted: %s", err);
    CHECK(count_lines(err) == 3, "one line per problem: %s", err);
    /* the good lines and the other sources are still loaded */
    rill_param_t *a, *b, *c;
    rill_param_register_int("ok_a", "", 1, 0, 0, 9, &a);
    rill_param_register_int("ok_b", "", 1, 0, 0, 9, &b);
    rill_param_register_int("ok_c", "", 1, 0, 0, 9, &c);
    CHECK(rill_param_get_int(a) == 1 && rill_param_get_int(b) == 2 && rill_param_get_int(c) == 5,
          "good lines kept");

    /* a missing $HOME/.rill/mca-params.conf is not an error; a missing listed file is */
    clean_env_home();
    CHECK(rill_params_load(NULL, NULL) == RILL_SUCCESS, "no home file");
    setenv("RILL_MCA_param_files", missing, 1);
    capture_begin();
    s = rill_params_load(NULL, NULL);
    err = capture_end();
    CHECK(s == RILL_ERR_IO && strstr(err, missing), "missing listed file: %d %s", s, err);
    CHECK(count_lines(err) == 1, "one line: %s", err);
    /* both problems in one list: both reported */
    snprintf(list, sizeof(list), "%s:%s", missing, bad);
    setenv("RILL_MCA_param_files", list, 1);
    capture_begin();
    s = rill_params_load(NULL, NULL);
    err = capture_end();
    CHECK(s == RILL_ERR_IO && strstr(err, missing) && count_lines(err) == 4, "both: %d %s", s, err);
}

static void test_cmdline(void)
{
    clean_env_home();
    char *args[] = { "prog",  "-v",  "--mca", "c_x", "7",    "input.txt",
                     "--mca", "c_y", "yes",   "--",  "last", NULL };
    int argc = 11;
    char **argv = args;
    CHECK(rill_params_load(&argc, &argv) == RILL_SUCCESS, "load");
    static const char *const want[] = { "prog", "-v", "input.txt", "--", "last" };
    CHECK(argc == 5, "argc %d", argc);
    for (int i = 0; i < 5 && i < argc; i++)
        CHECK(strcmp(argv[i], want[i]) == 0, "argv[%d] = %s, expected %s", i, argv[i], want[i]);
    CHECK(argv[argc] == NULL, "argv[argc] is NULL");
    rill_param_t *x, *y;
    rill_param_register_int("c_x", "", 1, 0, 0, 9, &x);
    rill_param_register_bool("c_y", "", 1, false, &y);
    CHECK(rill_param_get_int(x) == 7 && rill_param_get_bool(y), "cmdline values");

    /* the last of two --mca for one name wins */
    clean_env_home();
    char *args2[] = { "prog", "--mca", "c_x", "1", "--mca", "c_x", "2", NULL };
    argc = 7;
    argv = args2;
    CHECK(rill_params_load(&argc, &argv) == RILL_SUCCESS && argc == 1, "load twice-named");
    rill_param_register_int("c_x", "", 1, 0, 0, 9, &x);
    CHECK(rill_param_get_int(x) == 2, "last wins: %" PRId64, rill_param_get_int(x));

    /* --mca without its value, and without its name */
    clean_env_home();
    char *args3[] = { "prog", "keep", "--mca", "c_x", NULL };
    argc = 4;
    argv = args3;
    capture_begin();
    rill_status_t s = rill_params_load(&argc, &argv);
    const char *err = capture_end();
    CHECK(s == RILL_ERR_INVALID_ARG, "missing value: %d", s);
    CHECK(strstr(err, "--mca") && strstr(err, "c_x"), "message: %s", err);
    CHECK(argc == 2 && strcmp(argv[1], "keep") == 0 && argv[2] == NULL, "argv after: %d", argc);

    clean_env_home();
    char *args4[] = { "prog", "--mca", NULL };
    argc = 2;
    argv = args4;
    capture_begin();
    s = rill_params_load(&argc, &argv);
    err = capture_end();
    CHECK(s == RILL_ERR_INVALID_ARG && strstr(err, "--mca <name> <value>"), "missing name: %s",
          err);
    CHECK(argc == 1 && argv[1] == NULL, "argc %d", argc);

    /* NULL argc/argv, and argc == 0 */
    clean_env_home();
    CHECK(rill_params_load(NULL, NULL) == RILL_SUCCESS, "NULL argv");
    argc = 0;
    char *args5[] = { NULL };
    argv = args5;
    CHECK(rill_params_load(&argc, &argv) == RILL_SUCCESS && argc == 0, "argc 0");
}

/* A reload re-reads files and environment and replaces what they gave. */
static void test_reload(void)
{
    clean_env_home();
    setenv("RILL_MCA_r_x", "5", 1);
    CHECK(rill_params_load(NULL, NULL) == RILL_SUCCESS, "load");
    rill_param_t *p;
    rill_param_register_int("r_x", "", 1, 1, 0, 9, &p);
    CHECK(rill_param_get_int(p) == 5, "from env");
    setenv("RILL_MCA_r_x", "6", 1);
    CHECK(rill_params_load(NULL, NULL) == RILL_SUCCESS && rill_param_get_int(p) == 6,
          "reload updates: %" PRId64, rill_param_get_int(p));
    unsetenv("RILL_MCA_r_x");
    CHECK(rill_params_load(NULL, NULL) == RILL_SUCCESS && rill_param_get_int(p) == 1,
          "source gone: default");
    CHECK(info_of("r_x").source == RILL_PARAM_SOURCE_DEFAULT, "source default");
    /* a bad value on reload keeps the value and says so */
    setenv("RILL_MCA_r_x", "3", 1);
    rill_params_load(NULL, NULL);
    setenv("RILL_MCA_r_x", "300", 1);
    capture_begin();
    rill_status_t s = rill_params_load(NULL, NULL);
    const char *err = capture_end();
    CHECK(s == RILL_ERR_INVALID_ARG && rill_param_get_int(p) == 3, "bad on reload: %d", s);
    CHECK(strstr(err, "'300'") && strstr(err, "'r_x'"), "message: %s", err);

    /* set from code before registration, then re-registration */
    clean_env_home();
    CHECK(rill_param_set("s_early", "lots") == RILL_SUCCESS, "set unregistered");
    CHECK(rill_param_set("s_early", "gpq") == RILL_SUCCESS, "set again");
    static const char *const scheds[] = { "lfq", "gpq", NULL };
    rill_param_t *e = NULL;
    CHECK(rill_param_register_enum("s_early", "", 1, scheds, "lfq", &e) == RILL_SUCCESS &&
              rill_param_get_enum(e) == 1,
          "set before registration");
    rill_param_t *e2 = NULL;
    CHECK(rill_param_register_enum("s_early", "", 1, scheds, "lfq", &e2) == RILL_SUCCESS && e2 == e,
          "same handle");
    capture_begin();
    s = rill_param_set("s_early", "nope");
    capture_end();
    CHECK(s == RILL_ERR_INVALID_ARG && rill_param_get_enum(e) == 1, "bad set keeps the value");
    CHECK(rill_params_load(NULL, NULL) == RILL_SUCCESS && rill_param_get_enum(e) == 1,
          "a refused set is not kept as a source");
}

static void test_unknown(void)
{
    clean_env_home();
    char conf[512];
    write_file("unknown.conf", "# typo below\nshed = lfq\n", conf, sizeof(conf));
    setenv("RILL_MCA_param_files", conf, 1);
    setenv("RILL_MCA_sched_typ", "lfq", 1);
    setenv("RILL_MCA_SCHED", "lfq", 1);
    setenv("RILL_MCA_sched", "lfq", 1);
    setenv("RILL_MCA_both_typo", "1", 1);
    char *args[] = { "prog", "--mca", "comm_shortlimit", "4k", "--mca", "both_typo", "2", NULL };
    int argc = 7;
    char **argv = args;
    CHECK(rill_params_load(&argc, &argv) == RILL_SUCCESS, "load");
    CHECK(rill_param_set("gpu_memory_uze", "50") == RILL_SUCCESS, "set unknown");
    static const char *const scheds[] = { "lfq", "gpq", NULL };
    rill_param_t *p;
    rill_param_register_enum("sched", "", 1, scheds, "lfq", &p);
    rill_param_register_size("comm_short_limit", "", 1, 1024, 0, UINT64_MAX, &p);
    rill_param_register_int("gpu_memory_use", "", 1, 90, 1, 100, &p);
    rill_param_register_int("both_types", "", 1, 0, 0, 9, &p);

    capture_begin();
    int n = rill_params_warn_unknown();
    const char *err = capture_end();
    CHECK(n == 6, "6 unknown names, got %d: %s", n, err);
    CHECK(count_lines(err) == 6, "one line each: %s", err);
    char want[700];
    CHECK(strstr(err, "unknown parameter 'sched_typ' (environment RILL_MCA_sched_typ); did you "
                      "mean 'sched'?"),
          "sched_typ: %s", err);
    CHECK(strstr(err, "unknown parameter 'SCHED' (environment RILL_MCA_SCHED); did you mean "
                      "'sched'?"),
          "SCHED: %s", err);
    CHECK(strstr(err, "'comm_shortlimit' (--mca); did you mean 'comm_short_limit'?"),
          "comm_shortlimit: %s", err);
    snprintf(want, sizeof(want), "'shed' (file %s:2); did you mean 'sched'?", conf);
    CHECK(strstr(err, want), "want %s: %s", want, err);
    CHECK(strstr(err, "'gpu_memory_uze' (rill_param_set); did you mean 'gpu_memory_use'?"),
          "gpu_memory_uze: %s", err);
    /* in env and on the command line: once, naming the stronger source */
    CHECK(strstr(err, "'both_typo' (--mca); did you mean 'both_types'?"), "both_typo: %s", err);
    CHECK(!strstr(err, "param_files"), "RILL_MCA_param_files is not a parameter: %s", err);
    CHECK(!strstr(err, "'sched' ("), "sched is known: %s", err);

    capture_begin();
    n = rill_params_warn_unknown();
    err = capture_end();
    CHECK(n == 6 && err[0] == '\0', "second call: %d, warned again: %s", n, err);
    /* still once after a reload */
    rill_params_load(NULL, NULL);
    capture_begin();
    rill_params_warn_unknown();
    err = capture_end();
    CHECK(err[0] == '\0', "warned again after reload: %s", err);

    /* nothing registered: no suggestion */
    clean_env_home();
    rill_param_set("lonely", "1");
    capture_begin();
    n = rill_params_warn_unknown();
    err = capture_end();
    CHECK(n == 1 && strstr(err, "unknown parameter 'lonely' (rill_param_set)") &&
              !strstr(err, "did you mean"),
          "no suggestion: %s", err);
}

/* issue 7: a suggestion only for a name close to a known one */
static void test_suggestions(void)
{
    clean_env_home();
    setenv("RILL_MCA_foo", "1", 1);
    setenv("RILL_MCA_dtd_windw_size", "10", 1);
    setenv("RILL_MCA_dtd_window", "10", 1);     /* only one name extends it */
    setenv("RILL_MCA_runtime", "1", 1);         /* several names extend it */
    setenv("RILL_MCA_sched_lfq_steal", "1", 1); /* extends a known name */
    setenv("RILL_MCA_comm_shrot_limit", "1", 1);
    setenv("RILL_MCA_xyzzy_plugh_limit", "1", 1);
    CHECK(rill_params_load(NULL, NULL) == RILL_SUCCESS, "load");
    static const char *const scheds[] = { "lfq", "gpq", NULL };
    rill_param_t *p;
    rill_param_register_enum("sched", "", 1, scheds, "lfq", &p);
    rill_param_register_int("dtd_window_size", "", 1, 8000, 1, 1 << 30, &p);
    rill_param_register_size("comm_short_limit", "", 1, 8192, 0, UINT64_MAX, &p);
    rill_param_register_bool("runtime_bind", "", 1, true, &p);
    rill_param_register_int("runtime_num_cores", "", 1, 0, 0, 1024, &p);
    capture_begin();
    int n = rill_params_warn_unknown();
    const char *err = capture_end();
    CHECK(n == 7 && count_lines(err) == 7, "7 unknown names, got %d: %s", n, err);
    CHECK(strstr(err, "unknown parameter 'foo' (environment RILL_MCA_foo)\n"),
          "foo: no suggestion: %s", err);
    CHECK(strstr(err, "'dtd_windw_size' (environment RILL_MCA_dtd_windw_size); did you mean "
                      "'dtd_window_size'?"),
          "dtd_windw_size: %s", err);
    CHECK(strstr(err, "'dtd_window' (environment RILL_MCA_dtd_window); did you mean "
                      "'dtd_window_size'?"),
          "dtd_window: %s", err);
    CHECK(strstr(err, "unknown parameter 'runtime' (environment RILL_MCA_runtime)\n"),
          "runtime: no single suggestion: %s", err);
    CHECK(strstr(err, "'sched_lfq_steal' (environment RILL_MCA_sched_lfq_steal); did you mean "
                      "'sched'?"),
          "sched_lfq_steal: %s", err);
    CHECK(strstr(err, "'comm_shrot_limit' (environment RILL_MCA_comm_shrot_limit); did you "
                      "mean 'comm_short_limit'?"),
          "a swap of two letters: %s", err);
    CHECK(strstr(err, "unknown parameter 'xyzzy_plugh_limit' (environment "
                      "RILL_MCA_xyzzy_plugh_limit)\n"),
          "xyzzy_plugh_limit: no suggestion: %s", err);
}

/* issue 7: an empty parameter name is reported, naming its source */
static void test_empty_names(void)
{
    /* RILL_MCA_=x: a warning with the unknown names, once */
    clean_env_home();
    setenv("RILL_MCA_", "x", 1);
    CHECK(rill_params_load(NULL, NULL) == RILL_SUCCESS, "load");
    rill_param_t *p;
    rill_param_register_int("dtd_window_size", "", 1, 8000, 1, 1 << 30, &p);
    capture_begin();
    int n = rill_params_warn_unknown();
    const char *err = capture_end();
    CHECK(n == 1 && count_lines(err) == 1 &&
              strstr(err, "warning: environment: the variable RILL_MCA_=x has an empty parameter "
                          "name; ignored (expected RILL_MCA_<name>=<value>)"),
          "RILL_MCA_=x: %d %s", n, err);
    CHECK(!strstr(err, "did you mean"), "no suggestion for an empty name: %s", err);
    capture_begin();
    n = rill_params_warn_unknown();
    err = capture_end();
    CHECK(n == 1 && err[0] == '\0', "warned once: %s", err);

    /* --mca '' value: an error, and the three arguments are taken out */
    clean_env_home();
    char *args[] = { "prog", "--mca", "", "3", "keep", "--mca", "c_x", "1", NULL };
    int argc = 8;
    char **argv = args;
    capture_begin();
    rill_status_t s = rill_params_load(&argc, &argv);
    err = capture_end();
    CHECK(s == RILL_ERR_INVALID_ARG, "--mca '' 3: %d", s);
    CHECK(count_lines(err) == 1 &&
              strstr(err, "command line: --mca '' '3': the parameter name is empty; expected "
                          "--mca <name> <value>"),
          "--mca '' 3: %s", err);
    CHECK(argc == 2 && strcmp(argv[1], "keep") == 0 && argv[2] == NULL, "argv: %d", argc);
    rill_param_register_int("c_x", "", 1, 0, 0, 9, &p);
    CHECK(rill_param_get_int(p) == 1, "the other --mca is loaded");

    /* a file line '= 3' (and ' = 3'): file:line and what is wrong */
    clean_env_home();
    char conf[512], want[700];
    write_file("empty_name.conf", "= 3\nok_a = 1\n   =\n", conf, sizeof(conf));
    setenv("RILL_MCA_param_files", conf, 1);
    capture_begin();
    s = rill_params_load(NULL, NULL);
    err = capture_end();
    CHECK(s == RILL_ERR_IO && count_lines(err) == 2, "'= 3': %d %s", s, err);
    snprintf(want, sizeof(want), "%s:1: malformed line '= 3': the parameter name is empty", conf);
    CHECK(strstr(err, want), "want %s: %s", want, err);
    snprintf(want, sizeof(want), "%s:3: malformed line '=': the parameter name is empty", conf);
    CHECK(strstr(err, want), "want %s: %s", want, err);
}

/* The reader's parser without a file: any bytes, lines counted from 1. */
static void test_read_text(void)
{
    clean_env_home();
    static const char text[] = "t_a = 1\r\nt_b = 2\0 = 9\nbad line\nt_c=3"; /* no final \n */
    capture_begin();
    rill_status_t s = rill_params_read_text("mem", text, sizeof(text) - 1);
    const char *err = capture_end();
    CHECK(s == RILL_ERR_IO, "read_text: %d", s);
    CHECK(count_lines(err) == 2 && strstr(err, "mem:2: malformed line: it holds a NUL byte") &&
              strstr(err, "mem:3: malformed line 'bad line'"),
          "messages: %s", err);
    CHECK(rill_params_resolve() == RILL_SUCCESS, "resolve");
    rill_param_t *a, *b, *c;
    rill_param_register_int("t_a", "", 1, 0, 0, 9, &a);
    rill_param_register_int("t_b", "", 1, 0, 0, 9, &b);
    rill_param_register_int("t_c", "", 1, 0, 0, 9, &c);
    CHECK(rill_param_get_int(a) == 1 && rill_param_get_int(b) == 0 && rill_param_get_int(c) == 3,
          "values: %" PRId64 " %" PRId64 " %" PRId64, rill_param_get_int(a), rill_param_get_int(b),
          rill_param_get_int(c));
    CHECK(strcmp(info_of("t_c").source_detail, "mem:4") == 0, "detail %s",
          info_of("t_c").source_detail);
    CHECK(rill_params_read_text("mem", NULL, 0) == RILL_SUCCESS, "empty text");
}

/* Load with RILL_MCA_param_files=path; the status, the messages in *err_p. */
static rill_status_t load_listed(const char *path, const char **err_p)
{
    clean_env_home();
    setenv("RILL_MCA_param_files", path, 1);
    capture_begin();
    rill_status_t s = rill_params_load(NULL, NULL);
    *err_p = capture_end();
    return s;
}

/*
 * Only regular files of at most 1 MiB are read: a device, a directory or a FIFO listed in
 * RILL_MCA_param_files (or standing as $HOME/.rill/mca-params.conf) is refused at once by
 * name and kind, and a larger file by its size, each with one message and RILL_ERR_IO.
 * (The reader used to read /dev/zero until memory ran out, and to block on a FIFO: an
 * alarm ends the test then, and outside sanitizers the address space is bounded.)
 */
static void test_file_kinds(void)
{
    const char *err;
    rill_status_t s;
    alarm(60);

    s = load_listed("/dev/zero", &err);
    CHECK(s == RILL_ERR_IO && strstr(err, "parameter file /dev/zero is a character device") &&
              strstr(err, "regular file") && count_lines(err) == 1,
          "/dev/zero: %d %s", s, err);

    s = load_listed(tmpdir, &err);
    CHECK(s == RILL_ERR_IO && strstr(err, tmpdir) && strstr(err, "is a directory") &&
              strstr(err, "regular file") && count_lines(err) == 1,
          "directory: %d %s", s, err);

    char fifo[512];
    snprintf(fifo, sizeof(fifo), "%s/params.fifo", tmpdir);
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo %s", fifo);
    s = load_listed(fifo, &err); /* no writer: the old reader blocked here */
    CHECK(s == RILL_ERR_IO && strstr(err, fifo) && strstr(err, "is a FIFO") &&
              count_lines(err) == 1,
          "FIFO: %d %s", s, err);
    unlink(fifo);

    /* 1 MiB of good lines is read; one byte more is refused, naming the limit */
    char big[512];
    snprintf(big, sizeof(big), "%s/big.conf", tmpdir);
    static const char line[] = "big_a = 7   # padding to 32 b\n"; /* 31 bytes */
    for (int extra = 0; extra <= 1; extra++) {
        FILE *f = fopen(big, "w");
        size_t n = 0;
        while (n + sizeof(line) - 1 <= 1024 * 1024) {
            fputs(line, f);
            n += sizeof(line) - 1;
        }
        for (; n < 1024 * 1024 + (size_t)extra; n++)
            fputc('\n', f);
        fclose(f);
        s = load_listed(big, &err);
        if (!extra) {
            CHECK(s == RILL_SUCCESS && !err[0], "1 MiB file: %d %s", s, err);
        } else {
            CHECK(s == RILL_ERR_IO && strstr(err, big) &&
                      strstr(err, "too large (1048577 bytes)") && strstr(err, "at most 1 MiB") &&
                      count_lines(err) == 1,
                  "1 MiB + 1 file: %d %s", s, err);
        }
    }
    unlink(big);

    /* the same for $HOME/.rill/mca-params.conf: a directory there, then /dev/zero */
    char dir[512], home_conf[600];
    snprintf(dir, sizeof(dir), "%s/.rill", tmpdir);
    mkdir(dir, 0700);
    snprintf(home_conf, sizeof(home_conf), "%s/mca-params.conf", dir);
    unlink(home_conf);
    CHECK(mkdir(home_conf, 0700) == 0, "mkdir %s", home_conf);
    clean_env_home();
    capture_begin();
    s = rill_params_load(NULL, NULL);
    err = capture_end();
    CHECK(s == RILL_ERR_IO && strstr(err, home_conf) && strstr(err, "is a directory") &&
              count_lines(err) == 1,
          "home directory: %d %s", s, err);
    rmdir(home_conf);
    CHECK(symlink("/dev/zero", home_conf) == 0, "symlink %s", home_conf);
    clean_env_home(); /* removes the link */
    CHECK(symlink("/dev/zero", home_conf) == 0, "symlink %s", home_conf);
    capture_begin();
    s = rill_params_load(NULL, NULL);
    err = capture_end();
    CHECK(s == RILL_ERR_IO && strstr(err, home_conf) && strstr(err, "a character device") &&
              count_lines(err) == 1,
          "home /dev/zero: %d %s", s, err);
    unlink(home_conf);
    alarm(0);
}

/*
 * A leading UTF-8 byte order mark is skipped; in every message quoting a line or a value,
 * bytes outside printable ASCII show as \xHH (and a backslash as \\), and a long line is cut
 * with its length given, so the quoted text never hides what is wrong.
 */
static void test_file_bytes(void)
{
    char conf[512];
    const char *err;
    write_file("bom.conf",
               "\xEF\xBB\xBF"
               "bom_a = 1\nbom_b = 2\n",
               conf, sizeof(conf));
    rill_status_t s = load_listed(conf, &err);
    CHECK(s == RILL_SUCCESS && !err[0], "BOM file: %d %s", s, err);
    rill_param_t *a, *b;
    rill_param_register_int("bom_a", "", 1, 0, 0, 9, &a);
    rill_param_register_int("bom_b", "", 1, 0, 0, 9, &b);
    CHECK(rill_param_get_int(a) == 1 && rill_param_get_int(b) == 2,
          "BOM file values: %" PRId64 " %" PRId64, rill_param_get_int(a), rill_param_get_int(b));

    /* a BOM anywhere else, control bytes, a tab in a name, a backslash, a long line */
    char longline[1001];
    memset(longline, 'x', 1000);
    longline[1000] = '\0';
    char text[2000];
    snprintf(text, sizeof(text),
             "ok_a = 1\n"
             "\xEF\xBB\xBFmid_bom = 2\n"
             "ctl\x1b[2K_a = 3\n"
             "tab\tname = 4\n"
             "back\\slash = 5\n"
             "%s\n"
             "ok_v = 6\x01\n",
             longline);
    write_file("bytes.conf", text, conf, sizeof(conf));
    s = load_listed(conf, &err);
    CHECK(s == RILL_ERR_IO, "bytes file: %d", s);
    char want[800];
    static const char *const quoted[] = { "'\\xEF\\xBB\\xBFmid_bom = 2'", "'ctl\\x1B[2K_a = 3'",
                                          "'tab\\x09name = 4'", "'back\\\\slash = 5'" };
    for (int i = 0; i < 4; i++) {
        snprintf(want, sizeof(want), "%s:%d: malformed line %s: expected 'name = value'", conf,
                 i + 2, quoted[i]);
        CHECK(strstr(err, want), "no \"%s\" in: %s", want, err);
    }
    snprintf(want, sizeof(want), "%s:6: malformed line '%.160s...' (1000 bytes): ", conf, longline);
    CHECK(strstr(err, want), "no \"%s\" in: %s", want, err);
    CHECK(count_lines(err) == 5, "one line per malformed line: %s", err);
    for (const char *c = err; *c; c++)
        CHECK(*c == '\n' || (*c >= 0x20 && *c < 0x7f), "a raw byte 0x%02X in: %s",
              (unsigned char)*c, err);
    /* a bad value's message escapes it the same way */
    rill_param_t *v;
    capture_begin();
    s = rill_param_register_int("ok_v", "", 1, 0, 0, 9, &v);
    err = capture_end();
    snprintf(want, sizeof(want), "bad value '6\\x01' for parameter 'ok_v' (file %s:7)", conf);
    CHECK(s == RILL_ERR_INVALID_ARG && strstr(err, want), "bad value: %d %s", s, err);
    /* and so does the warning about an unknown name, from the environment here */
    clean_env_home();
    setenv("RILL_MCA_esc\x1b[1m", "1", 1);
    CHECK(rill_params_load(NULL, NULL) == RILL_SUCCESS, "load");
    capture_begin();
    int unknown = rill_params_warn_unknown();
    err = capture_end();
    CHECK(unknown == 1 && strstr(err, "unknown parameter 'esc\\x1B[1m' (environment "
                                      "RILL_MCA_esc\\x1B[1m)"),
          "unknown: %d %s", unknown, err);
    unsetenv("RILL_MCA_esc\x1b[1m");
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_precedence();
    test_files();
    test_file_errors();
    test_cmdline();
    test_reload();
    test_unknown();
    test_suggestions();
    test_empty_names();
    test_read_text();
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    /* the old reader of /dev/zero fails here (no memory) instead of taking the machine's */
    struct rlimit as = { 1UL << 30, 1UL << 30 };
    setrlimit(RLIMIT_AS, &as);
#endif
    test_file_bytes();
    test_file_kinds();
    clean_env_home();
    return test_finish();
}
