// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Command-line options from one table per command: parsing with getopt_long's forms and
 * messages, and the help printed from the same table. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "lib/options.h"

#define HELP_COLUMN	25	/* where the help of an option starts */
#define HELP_WIDTH	80

static bool takes_arg(const struct option_spec *o)
{
	switch (o->kind) {
	case OPTION_STRING:
	case OPTION_U64:
	case OPTION_U32:
	case OPTION_SECONDS:
		return true;
	case OPTION_CALLBACK:
		return o->argh;
	default:
		return false;
	}
}

/* a syntax error, in getopt's words: "hsbpf record: invalid option -- 'Z'", then the pointer */
__attribute__((format(printf, 2, 3)))
static int usage_error(const struct options_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

/* "--name", or "-x" for an option that has no long name */
static void option_name(const struct option_spec *o, char name[64])
{
	if (o->long_name)
		snprintf(name, 64, "--%s", o->long_name);
	else
		snprintf(name, 64, "-%c", o->short_name);
}

static int bad_number(const struct option_spec *o, const char *arg)
{
	char name[64];

	option_name(o, name);
	if (o->invalid)
		error(o->invalid, arg, (unsigned long long)o->min, (unsigned long long)o->max);
	else if (o->max)
		error("invalid %s '%s' (%llu to %llu)", name, arg, (unsigned long long)o->min,
		      (unsigned long long)o->max);
	else
		error("invalid %s '%s'", name, arg);
	return -EINVAL;
}

/* one option taken: 0, or -EINVAL after saying what is wrong */
static int apply(const struct option_spec *o, const char *arg, bool negated)
{
	char name[64];
	double d;
	u64 v;

	switch (o->kind) {
	case OPTION_FLAG:
		*(bool *)o->value = !negated && !(o->flags & OPTF_CLEAR);
		return 0;
	case OPTION_SET:
		*(int *)o->value = negated ? 0 : o->set;
		return 0;
	case OPTION_COUNT:
		(*(int *)o->value)++;
		return 0;
	case OPTION_STRING:
		*(const char **)o->value = arg;
		return 0;
	case OPTION_U64:
	case OPTION_U32:
		if (parse_u64(arg, &v) || v < o->min || (o->max && v > o->max) ||
		    (o->kind == OPTION_U32 && v > UINT32_MAX))
			return bad_number(o, arg);
		if (o->kind == OPTION_U64)
			*(u64 *)o->value = v;
		else
			*(u32 *)o->value = v;
		return 0;
	case OPTION_SECONDS:
		if (!parse_seconds(arg, o->dmin, o->dmax, &d)) {
			*(double *)o->value = d;
			return 0;
		}
		option_name(o, name);
		if (o->invalid)
			error(o->invalid, arg, o->dmin, o->dmax);
		else
			error("invalid %s '%s' (%g to %g seconds)", name, arg, o->dmin, o->dmax);
		return -EINVAL;
	case OPTION_CALLBACK:
		return o->cb(o, arg);
	default:
		return -EINVAL;
	}
}

/* -h and --help, which every command takes */
static const struct option_spec help_opt = { .kind = OPTION_GROUP, .short_name = 'h',
					     .long_name = "help" };

/* whether name (len bytes) names o, as itself or as --no-NAME, exactly or as a prefix */
static bool names(const struct option_spec *o, const char *name, size_t len, bool neg, bool exact)
{
	const char *n = o->long_name;

	if (!n || (neg && !(o->flags & OPTF_NEG)))
		return false;
	if (neg) {
		if (len < 3 || strncmp(name, "no-", 3))
			return false;
		name += 3;
		len -= 3;
	}
	return !strncmp(name, n, len) && (!exact || strlen(n) == len);
}

/* --name[=arg]: the option, or NULL after saying why there is none */
static const struct option_spec *find_long(const struct options_cmd *cmd,
					   const struct option_spec *opts, const char *name,
					   size_t len, bool *negated)
{
	const struct option_spec *found = NULL;
	int matches = 0;

	for (int exact = 1; exact >= 0 && !matches; exact--) {
		for (const struct option_spec *o = opts;; o++) {
			if (o->kind == OPTION_END)
				o = &help_opt;
			for (int neg = 0; neg < 2; neg++) {
				if (!names(o, name, len, neg, exact))
					continue;
				matches++;
				found = o;
				*negated = neg;
			}
			if (o == &help_opt)
				break;
		}
	}
	if (matches == 1)
		return found;
	if (!matches) {
		usage_error(cmd, "unrecognized option '--%s'", name);
		return NULL;
	}
	fprintf(stderr, "%s: option '--%.*s' is ambiguous; possibilities:", cmd->name, (int)len, name);
	for (const struct option_spec *o = opts; o->kind != OPTION_END; o++)
		for (int neg = 0; neg < 2; neg++)
			if (names(o, name, len, neg, false))
				fprintf(stderr, " '--%s%s'", neg ? "no-" : "", o->long_name);
	fputc('\n', stderr);
	return NULL;
}

static const struct option_spec *find_short(const struct option_spec *opts, char c)
{
	for (const struct option_spec *o = opts; o->kind != OPTION_END; o++)
		if (o->short_name == c && o->kind != OPTION_GROUP)
			return o;
	return c == 'h' ? &help_opt : NULL;
}

/* argv[*i], a long option: 0, 1 for --help, -EINVAL after saying what is wrong */
static int parse_long(const struct options_cmd *cmd, const struct option_spec *opts, int argc,
		      char **argv, int *i)
{
	const char *name = argv[*i] + 2, *eq = strchr(name, '='), *arg = NULL;
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct option_spec *o;
	bool negated = false;

	o = find_long(cmd, opts, name, len, &negated);
	if (!o)
		return -EINVAL;
	if (o == &help_opt)
		return 1;
	if (eq && (!takes_arg(o) || negated))
		return usage_error(cmd, "option '--%s%s' doesn't allow an argument",
				   negated ? "no-" : "", o->long_name);
	if (eq)
		arg = eq + 1;
	else if (takes_arg(o) && !(o->flags & OPTF_OPTARG)) {
		if (*i + 1 >= argc)
			return usage_error(cmd, "option '--%s' requires an argument", o->long_name);
		arg = argv[++*i];
	} else if ((o->flags & OPTF_NEXTARG) && !negated && *i + 1 < argc && argv[*i + 1][0] != '-') {
		arg = argv[++*i];
	}
	return apply(o, arg, negated);
}

/* argv[*i], one or more short options (-vv, -xVALUE, -x VALUE): as parse_long */
static int parse_short(const struct options_cmd *cmd, const struct option_spec *opts, int argc,
		       char **argv, int *i)
{
	for (const char *p = argv[*i] + 1; *p; p++) {
		const struct option_spec *o = find_short(opts, *p);
		const char *arg = NULL;
		int err;

		if (!o)
			return usage_error(cmd, "invalid option -- '%c'", *p);
		if (o == &help_opt)
			return 1;
		if (takes_arg(o)) {
			if (p[1])
				arg = p + 1;
			else if (!(o->flags & OPTF_OPTARG) && *i + 1 < argc)
				arg = argv[++*i];
			else if ((o->flags & OPTF_NEXTARG) && *i + 1 < argc && argv[*i + 1][0] != '-')
				arg = argv[++*i];
			else if (!(o->flags & OPTF_OPTARG))
				return usage_error(cmd, "option requires an argument -- '%c'", *p);
			return apply(o, arg, false);
		}
		err = apply(o, NULL, false);
		if (err)
			return err;
	}
	return 0;
}

int options__parse(const struct options_cmd *cmd, const struct option_spec *opts, int argc,
		   char **argv)
{
	int nr = 0, err = 0;
	bool only_args = false;

	for (int i = 1; i < argc && !err; i++) {
		const char *a = argv[i];

		if (only_args || a[0] != '-' || !a[1]) {
			/* nr < i: what is written over was read already */
			argv[nr++] = argv[i];
			only_args = cmd->stop_at_arg;
			continue;
		}
		if (!strcmp(a, "--"))
			only_args = true;
		else if (a[1] == '-')
			err = parse_long(cmd, opts, argc, argv, &i);
		else
			err = parse_short(cmd, opts, argc, argv, &i);
	}
	if (err > 0) {
		options__usage(cmd, opts, stdout);
		return -ECANCELED;
	}
	if (!err && nr && cmd->no_args)
		err = fail(-EINVAL, "unexpected argument '%s'", argv[0]);
	if (err) {
		usage_hint(cmd->name);
		return err;
	}
	argv[nr] = NULL;
	return nr;
}

int options__status(int err)
{
	return err == -ECANCELED ? 0 : 2;
}

/* text from column col, wrapped at HELP_WIDTH with lines after the first at indent; '\n'
 * starts a new line */
static void print_wrapped(FILE *f, const char *text, int col, int indent)
{
	const char *p = text;

	while (*p) {
		size_t word = strcspn(p, " \n");

		if (col > indent && col + 1 + (int)word > HELP_WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, word, f);
		col += word;
		p += word;
		if (*p == '\n') {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		}
		while (*p == ' ' || *p == '\n')
			p++;
	}
	fputc('\n', f);
}

static void print_option(FILE *f, const struct option_spec *o)
{
	char left[128];
	int n;

	n = snprintf(left, sizeof(left), "  %s%c%s", o->short_name ? "-" : " ",
		     o->short_name ? o->short_name : ' ', o->short_name && o->long_name ? "," : " ");
	if (o->long_name)
		n += snprintf(left + n, sizeof(left) - n, " --%s%s", o->flags & OPTF_NEG ? "[no-]" : "",
			      o->long_name);
	if (takes_arg(o))
		n += snprintf(left + n, sizeof(left) - n, o->flags & OPTF_OPTARG ?
			      (o->long_name ? "[=%s]" : "[%s]") : " %s", o->argh);
	fputs(left, f);
	if (!o->help || !*o->help) {
		fputc('\n', f);
		return;
	}
	if (n >= HELP_COLUMN - 1) {
		fprintf(f, "\n%*s", HELP_COLUMN, "");
		n = HELP_COLUMN;
	} else {
		fprintf(f, "%*s", HELP_COLUMN - n, "");
		n = HELP_COLUMN;
	}
	print_wrapped(f, o->help, n, HELP_COLUMN);
}

void options__usage(const struct options_cmd *cmd, const struct option_spec *opts, FILE *f)
{
	fputs(cmd->usage, f);
	if (cmd->intro)
		fprintf(f, "\n%s", cmd->intro);
	fputc('\n', f);
	for (const struct option_spec *o = opts; o->kind != OPTION_END; o++) {
		if (o->flags & OPTF_HIDDEN)
			continue;
		if (o->kind == OPTION_GROUP)
			fprintf(f, "%s\n", o->help);
		else
			print_option(f, o);
	}
	if (cmd->outro)
		fprintf(f, "\n%s", cmd->outro);
}
