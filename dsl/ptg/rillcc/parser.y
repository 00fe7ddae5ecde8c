/* rillcc's grammar (bison): a .rill file, as docs/ptg.md describes it. Builds the tree of
 * ast.h; the checks of what the grammar cannot say are in check.c. */
%code requires {
#include "ast.h"
}

%{
#include <stdlib.h>
#include <string.h>

#include "ast.h"

int yylex(void);
static void yyerror(const char *msg);

static loc_t L(int line, int col)
{
    loc_t l = { line, col };
    return l;
}
#define AT(y) L((y).first_line, (y).first_column)

/* bison's stack (on the heap): the parser stops with "memory exhausted" past it, which
 * yyerror words as nesting too deep; RILLCC_MAX_DEPTH comes first for most inputs */
#define YYMAXDEPTH 10000

/* e with its height set, or, when that goes past RILLCC_MAX_DEPTH, an error at e's operator
 * and a leaf in its place (whose height past the bound tells the nodes above it that this
 * was reported): the tree stays bounded, so no walk of it can overflow the stack */
static expr_t *bounded(expr_t *e)
{
    int d = 0;
    expr_t *kids[3] = { e->a, e->b, e->c };
    for (int i = 0; i < 3; i++) {
        if (kids[i] && kids[i]->depth > RILLCC_MAX_DEPTH)
            return kids[i]; /* reported below */
        if (kids[i] && kids[i]->depth > d)
            d = kids[i]->depth;
    }
    e->depth = d + 1;
    if (e->depth <= RILLCC_MAX_DEPTH)
        return e;
    rillcc_error(e->loc,
                 "expression nested deeper than %d levels (a chain of operators or of "
                 "parentheses): split it, e.g. into locals 'x = ...' under the class's name",
                 RILLCC_MAX_DEPTH);
    expr_t *leaf = expr_new(E_INT, e->loc);
    leaf->depth = RILLCC_MAX_DEPTH + 1;
    return leaf;
}

static expr_t *bin(int op, expr_t *a, expr_t *b, loc_t loc)
{
    expr_t *e = expr_new(E_BIN, loc);
    e->op = op;
    e->a = a;
    e->b = b;
    return bounded(e);
}

static expr_t *un(int op, expr_t *a, loc_t loc)
{
    expr_t *e = expr_new(E_UN, loc);
    e->op = op;
    e->a = a;
    return bounded(e);
}

static expr_t *tern(expr_t *a, expr_t *b, expr_t *c, loc_t loc)
{
    expr_t *e = expr_new(E_TERN, loc);
    e->a = a;
    e->b = b;
    e->c = c;
    return bounded(e);
}

static int count_args(const arg_t *a)
{
    int n = 0;
    for (; a; a = a->next)
        n++;
    return n;
}

/* lists are built in reverse (left recursion, prepend) and put in order once complete */
#define REVERSE(type, head)                                                                        \
    do {                                                                                           \
        type *prev_ = NULL, *cur_ = (head);                                                        \
        while (cur_) {                                                                             \
            type *next_ = cur_->next;                                                              \
            cur_->next = prev_;                                                                    \
            prev_ = cur_;                                                                          \
            cur_ = next_;                                                                          \
        }                                                                                          \
        (head) = prev_;                                                                            \
    } while (0)

/* f(args): as deep as its deepest argument, plus one (bounded as an operator is: the
 * deepest argument stands in as the operand) */
static expr_t *call(char *name, arg_t *args, loc_t loc)
{
    expr_t *e = expr_new(E_CALL, loc);
    e->text = name;
    e->args = args; /* in order (opt_args) */
    for (const arg_t *a = args; a; a = a->next) {
        if (a->lo && (!e->a || a->lo->depth > e->a->depth))
            e->a = a->lo;
        if (a->hi && (!e->a || a->hi->depth > e->a->depth))
            e->a = a->hi;
    }
    expr_t *b = bounded(e);
    e->a = NULL; /* the arguments are its children */
    return b;
}

typedef struct idlist {
    char *name;
    loc_t loc;
    struct idlist *next;
} idlist_t;
%}

%locations
%define parse.error verbose

%union {
    long long num;
    char *str;
    struct expr *expr;
    struct arg *arg;
    struct target *target;
    struct dep *dep;
    struct flow *flow;
    struct def *def;
    struct body *body;
    struct tclass *tclass;
    struct global *global;
    struct idlist *ids;
    int kind;
}

%token <str> ID STRING FLOATNUM PROLOGUE_CODE BODY_CODE
%token <num> INTNUM
%token BODY READ WRITE RW CTL NEW NULLT FLOPS URGENT LARROW RARROW DOTDOT EQ NE LE GE AND OR ERRTOK

%type <expr> expr opt_priority opt_flops opt_urgent
%type <arg> args opt_args arg
%type <target> target
%type <dep> deps dep
%type <flow> flows flow
%type <kind> flow_kind
%type <def> defs def
%type <body> bodies body
%type <str> opt_body_type
%type <tclass> tclass
%type <global> global
%type <ids> ids opt_ids

%right '?' ':'
%left OR
%left AND
%left EQ NE
%left '<' '>' LE GE
%left '+' '-'
%left '*' '/' '%'
%precedence UNARY

%%

program
    : opt_prologue items
    ;

opt_prologue
    : %empty
    | PROLOGUE_CODE { rillcc_prog.prologue = $1; rillcc_prog.prologue_loc = AT(@1); }
    ;

items
    : %empty
    | items global { $2->next = rillcc_prog.globals; rillcc_prog.globals = $2; }
    | items tclass { $2->next = rillcc_prog.classes; rillcc_prog.classes = $2; }
    ;

global
    : ID '[' ID '=' STRING ']' {
          $$ = rillcc_alloc(sizeof(global_t));
          $$->name = $1;
          $$->loc = AT(@1);
          if (strcmp($3, "type") != 0)
              rillcc_error(AT(@3), "unknown property '%s' of global '%s': a global has "
                           "[type = \"C type\"]", $3, $1);
          $$->type = $5;
      }
    ;

tclass
    : ID '(' opt_ids ')' defs ':' ID '(' opt_args ')' flows opt_priority opt_flops opt_urgent bodies {
          tclass_t *c = rillcc_alloc(sizeof(tclass_t));
          c->name = $1;
          c->loc = AT(@1);
          REVERSE(idlist_t, $3);
          for (idlist_t *i = $3; i; i = i->next)
              c->nparams++;
          c->params = rillcc_alloc(sizeof(char *) * (size_t)(c->nparams + 1));
          c->param_locs = rillcc_alloc(sizeof(loc_t) * (size_t)(c->nparams + 1));
          int k = 0;
          for (idlist_t *i = $3; i; i = i->next, k++) {
              c->params[k] = i->name;
              c->param_locs[k] = i->loc;
          }
          REVERSE(def_t, $5);
          c->defs = $5;
          c->aff_name = $7;
          c->aff_args = $9;
          c->aff_nargs = count_args($9);
          c->aff_loc = AT(@7);
          REVERSE(flow_t, $11);
          c->flows = $11;
          c->priority = $12;
          c->flops = $13;
          c->urgent = $14;
          REVERSE(body_t, $15);
          c->bodies = $15;
          $$ = c;
      }
    ;

opt_ids
    : %empty { $$ = NULL; }
    | ids
    ;

ids
    : ID { $$ = rillcc_alloc(sizeof(idlist_t)); $$->name = $1; $$->loc = AT(@1); }
    | ids ',' ID {
          $$ = rillcc_alloc(sizeof(idlist_t));
          $$->name = $3;
          $$->loc = AT(@3);
          $$->next = $1;
      }
    ;

defs
    : %empty { $$ = NULL; }
    | defs def { $2->next = $1; $$ = $2; }
    ;

def
    : ID '=' expr DOTDOT expr {
          $$ = rillcc_alloc(sizeof(def_t)); $$->name = $1; $$->loc = AT(@1);
          $$->lo = $3; $$->hi = $5;
      }
    | ID '=' expr DOTDOT expr DOTDOT expr {
          $$ = rillcc_alloc(sizeof(def_t)); $$->name = $1; $$->loc = AT(@1);
          $$->lo = $3; $$->hi = $5; $$->step = $7;
      }
    | ID '=' expr {
          $$ = rillcc_alloc(sizeof(def_t)); $$->name = $1; $$->loc = AT(@1); $$->lo = $3;
      }
    ;

flows
    : flow
    | flows flow { $2->next = $1; $$ = $2; }
    ;

flow
    : flow_kind ID deps {
          $$ = rillcc_alloc(sizeof(flow_t));
          $$->kind = (flow_kind_t)$1;
          $$->name = $2;
          $$->loc = AT(@2);
          REVERSE(dep_t, $3);
          $$->deps = $3;
      }
    | flow_kind ID '[' ID '=' STRING ']' deps {
          $$ = rillcc_alloc(sizeof(flow_t));
          $$->kind = (flow_kind_t)$1;
          $$->name = $2;
          $$->loc = AT(@2);
          if (strcmp($4, "type") != 0)
              rillcc_error(AT(@4), "unknown property '%s' of flow '%s': a flow has "
                           "[type = \"C type\"] (what its body sees the data as) or nothing",
                           $4, $2);
          $$->type = $6;
          REVERSE(dep_t, $8);
          $$->deps = $8;
      }
    ;

flow_kind
    : READ { $$ = F_READ; }
    | WRITE { $$ = F_WRITE; }
    | RW { $$ = F_RW; }
    | CTL { $$ = F_CTL; }
    ;

deps
    : %empty { $$ = NULL; }
    | deps dep { $2->next = $1; $$ = $2; }
    ;

dep
    : LARROW target {
          $$ = rillcc_alloc(sizeof(dep_t)); $$->dir = '<'; $$->loc = AT(@1); $$->then = $2;
      }
    | RARROW target {
          $$ = rillcc_alloc(sizeof(dep_t)); $$->dir = '>'; $$->loc = AT(@1); $$->then = $2;
      }
    | LARROW '(' expr ')' '?' target {
          $$ = rillcc_alloc(sizeof(dep_t)); $$->dir = '<'; $$->loc = AT(@1);
          $$->guard = $3; $$->then = $6;
      }
    | RARROW '(' expr ')' '?' target {
          $$ = rillcc_alloc(sizeof(dep_t)); $$->dir = '>'; $$->loc = AT(@1);
          $$->guard = $3; $$->then = $6;
      }
    | LARROW '(' expr ')' '?' target ':' target {
          $$ = rillcc_alloc(sizeof(dep_t)); $$->dir = '<'; $$->loc = AT(@1);
          $$->guard = $3; $$->then = $6; $$->other = $8;
      }
    | RARROW '(' expr ')' '?' target ':' target {
          $$ = rillcc_alloc(sizeof(dep_t)); $$->dir = '>'; $$->loc = AT(@1);
          $$->guard = $3; $$->then = $6; $$->other = $8;
      }
    ;

target
    : ID ID '(' opt_args ')' {
          $$ = rillcc_alloc(sizeof(target_t)); $$->kind = T_TASK; $$->loc = AT(@1);
          $$->flow = $1; $$->name = $2; $$->args = $4; $$->nargs = count_args($4);
      }
    | ID '(' opt_args ')' {
          $$ = rillcc_alloc(sizeof(target_t)); $$->kind = T_DATA; $$->loc = AT(@1);
          $$->name = $1; $$->args = $3; $$->nargs = count_args($3);
      }
    | NEW {
          $$ = rillcc_alloc(sizeof(target_t)); $$->kind = T_NONE; $$->loc = AT(@1);
          $$->name = rillcc_strdup("NEW");
      }
    | NULLT {
          $$ = rillcc_alloc(sizeof(target_t)); $$->kind = T_NONE; $$->loc = AT(@1);
          $$->name = rillcc_strdup("NULL");
      }
    ;

opt_args
    : %empty { $$ = NULL; }
    | args { REVERSE(arg_t, $1); $$ = $1; }
    ;

args
    : arg
    | args ',' arg { $3->next = $1; $$ = $3; }
    ;

arg
    : expr { $$ = rillcc_alloc(sizeof(arg_t)); $$->lo = $1; }
    | expr DOTDOT expr { $$ = rillcc_alloc(sizeof(arg_t)); $$->lo = $1; $$->hi = $3; }
    ;

opt_priority
    : %empty { $$ = NULL; }
    | ';' expr { $$ = $2; }
    ;

opt_flops
    : %empty { $$ = NULL; }
    | FLOPS expr { $$ = $2; }
    ;

opt_urgent
    : %empty { $$ = NULL; }
    | URGENT expr { $$ = $2; }
    ;

bodies
    : body
    | bodies body { $2->next = $1; $$ = $2; }
    ;

body
    : BODY opt_body_type BODY_CODE {
          $$ = rillcc_alloc(sizeof(body_t)); $$->type = $2; $$->code = $3; $$->loc = AT(@1);
          $$->code_line = @3.first_line;
      }
    ;

opt_body_type
    : %empty { $$ = NULL; }
    | '[' ID '=' ID ']' {
          if (strcmp($2, "type") != 0)
              rillcc_error(AT(@2), "unknown property '%s' of a body: a body has "
                           "[type = CUDA] or nothing (a CPU body)", $2);
          $$ = $4;
      }
    ;

expr
    : INTNUM { $$ = expr_new(E_INT, AT(@1)); $$->ival = $1; }
    | FLOATNUM { $$ = expr_new(E_FLOAT, AT(@1)); $$->text = $1; }
    | ID { $$ = expr_new(E_ID, AT(@1)); $$->text = $1; }
    | ID '(' opt_args ')' { $$ = call($1, $3, AT(@1)); }
    | '(' expr ')' { $$ = $2; }
    | '-' expr %prec UNARY { $$ = un('-', $2, AT(@1)); }
    | '!' expr %prec UNARY { $$ = un('!', $2, AT(@1)); }
    | expr '+' expr { $$ = bin('+', $1, $3, AT(@2)); }
    | expr '-' expr { $$ = bin('-', $1, $3, AT(@2)); }
    | expr '*' expr { $$ = bin('*', $1, $3, AT(@2)); }
    | expr '/' expr { $$ = bin('/', $1, $3, AT(@2)); }
    | expr '%' expr { $$ = bin('%', $1, $3, AT(@2)); }
    | expr '<' expr { $$ = bin('<', $1, $3, AT(@2)); }
    | expr '>' expr { $$ = bin('>', $1, $3, AT(@2)); }
    | expr LE expr { $$ = bin(LE, $1, $3, AT(@2)); }
    | expr GE expr { $$ = bin(GE, $1, $3, AT(@2)); }
    | expr EQ expr { $$ = bin(EQ, $1, $3, AT(@2)); }
    | expr NE expr { $$ = bin(NE, $1, $3, AT(@2)); }
    | expr AND expr { $$ = bin(AND, $1, $3, AT(@2)); }
    | expr OR expr { $$ = bin(OR, $1, $3, AT(@2)); }
    | expr '?' expr ':' expr { $$ = tern($1, $3, $5, AT(@2)); }
    ;

%%

static void yyerror(const char *msg)
{
    loc_t l = { yylloc.first_line, yylloc.first_column };
    if (strcmp(msg, "memory exhausted") == 0) { /* YYMAXDEPTH: a long unary or ?: chain */
        rillcc_error(l,
                     "expression nested too deeply: the parser's stack is full (%d levels); "
                     "nest at most %d levels",
                     YYMAXDEPTH, RILLCC_MAX_DEPTH);
        return;
    }
    /* bison's "syntax error, unexpected X, expecting Y or Z": keep its words, name the
     * tokens as they are written */
    static const struct {
        const char *bison, *written;
    } names[] = { { "LARROW", "'<-'" }, { "RARROW", "'->'" }, { "DOTDOT", "'..'" },
                  { "EQ", "'=='" },     { "NE", "'!='" },     { "LE", "'<='" },
                  { "GE", "'>='" },     { "AND", "'&&'" },    { "OR", "'||'" },
                  { "ID", "a name" },   { "INTNUM", "an integer" },
                  { "FLOATNUM", "a number" }, { "STRING", "a string" },
                  { "BODY_CODE", "the body's code" }, { "NULLT", "NULL" },
                  { "ERRTOK", "an invalid character" },
                  { "end of file", "the end of the file" } };
    char out[512];
    size_t o = 0;
    for (const char *p = msg; *p && o + 1 < sizeof(out);) {
        size_t i = 0;
        for (; i < sizeof(names) / sizeof(names[0]); i++) {
            size_t n = strlen(names[i].bison);
            if (strncmp(p, names[i].bison, n) == 0 &&
                !(p[n] >= 'A' && p[n] <= 'Z') && !(p[n] >= 'a' && p[n] <= 'z')) {
                o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", names[i].written);
                p += n;
                break;
            }
        }
        if (i == sizeof(names) / sizeof(names[0]))
            out[o++] = *p++;
    }
    out[o < sizeof(out) ? o : sizeof(out) - 1] = '\0';
    rillcc_error(l, "%s", out);
}
