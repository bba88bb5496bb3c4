// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* top's ncurses screen. Layout: two header lines, the column titles, the rows, and a status
 * line at the bottom; everything is laid out again for the terminal's width on each draw. */
#include <curses.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <inttypes.h>
#include <unistd.h>
#include "report/callchain.h"
#include "report/top_tui.h"

#define ZOOM_DEPTH 4
#define HEAD_LINES 3		/* header (2) + titles */

enum mode { MODE_ROWS, MODE_HELP, MODE_FILTER, MODE_LINKS };

struct top_tui {
	SCREEN *scr;
	bool active;
	int saved_stderr;	/* messages written while the screen is up wait in a file */
	FILE *held;
	enum mode mode;
	size_t sel, first;	/* selected row, first row shown */
	const struct hist_row *rows;
	size_t nr_rows;
	double total;
	struct top_view stack[ZOOM_DEPTH];
	int depth;
	char input[64];
	char message[160];
	/* MODE_LINKS: the function whose callers and callees are shown, refreshed live */
	struct hist_row linked;
	char linked_sym[256], linked_dso[256];
	struct callchain_links links;
	double links_age;	/* top__callchain_age of the stacks they are from */
};

static struct top_tui *active_tui;

static void restore_terminal(struct top_tui *u)
{
	if (!u->active)
		return;
	u->active = false;
	endwin();
	if (u->saved_stderr >= 0) {
		fflush(stderr);
		dup2(u->saved_stderr, STDERR_FILENO);
		close(u->saved_stderr);
		u->saved_stderr = -1;
	}
}

/* a crash still gives the terminal back before the default action (as htop does) */
static void on_fatal(int sig)
{
	if (active_tui)
		restore_terminal(active_tui);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void restore_at_exit(void)
{
	if (active_tui)
		restore_terminal(active_tui);
}

struct top_tui *top_tui__open(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	struct top_tui *u = calloc(1, sizeof(*u));
	static bool registered;

	if (!u)
		return NULL;
	u->saved_stderr = -1;
	u->scr = newterm(NULL, stdout, stdin);
	if (!u->scr) {
		error("cannot drive the terminal (TERM=%s): use --stdio", getenv("TERM") ? getenv("TERM") : "");
		free(u);
		return NULL;
	}
	u->active = true;
	active_tui = u;
	if (!registered) {
		atexit(restore_at_exit);
		registered = true;
	}
	for (size_t i = 0; i < ARRAY_SIZE(fatal); i++)
		signal(fatal[i], on_fatal);
	cbreak();		/* not raw: Ctrl-C stays a signal */
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	/* messages while the screen is up would scribble over it: hold them until the end */
	u->held = tmpfile();
	if (u->held) {
		fflush(stderr);
		u->saved_stderr = dup(STDERR_FILENO);
		if (u->saved_stderr < 0 || dup2(fileno(u->held), STDERR_FILENO) < 0) {
			if (u->saved_stderr >= 0)
				close(u->saved_stderr);
			u->saved_stderr = -1;
		}
	}
	snprintf(u->message, sizeof(u->message), "h: help  q: quit");
	return u;
}

void top_tui__close(struct top_tui *u)
{
	char buf[4096];
	size_t n;

	if (!u)
		return;
	restore_terminal(u);
	if (u->held) {
		rewind(u->held);
		while ((n = fread(buf, 1, sizeof(buf), u->held)) > 0)
			fwrite(buf, 1, n, stderr);
		fclose(u->held);
	}
	if (u->scr)
		delscreen(u->scr);
	if (active_tui == u)
		active_tui = NULL;
	callchain__links_free(&u->links);
	free(u);
}

/* m: the next of --memory's views; whether the rows are to be made again */
static bool next_memory_view(struct top_tui *u, struct top_view *v)
{
	if (!v->memory) {
		snprintf(u->message, sizeof(u->message), "m: the memory views (top --memory)");
		return false;
	}
	v->mview = (v->mview + 1) % MEMORY_VIEW_NR;
	snprintf(u->message, sizeof(u->message), "view %s", memory__view_name(v->mview));
	return true;
}

static const char *const help_lines[] = {
	"hsbpf top: keys",
	"",
	"  Up/Down, PgUp/PgDn, Home/End   select a row",
	"  Enter or Right    zoom into the selected row's process (or container)",
	"  Backspace or Left zoom back out",
	"  Tab or g          next grouping: functions, IPs, blocks, processes, containers",
	"  1 2 3 4 5         functions, IPs, blocks, processes, containers",
	"  s                 next sort order: samples, name, process, container",
	"  d                 decay (a window of about 8 intervals) or accumulate",
	"  /                 filter by a name: symbol, object, command or container",
	"  p or Space        pause (the view holds; sampling goes on)",
	"  c                 the selected function's callers and callees (top -g)",
	"  m                 --memory: next view: alloc_space, alloc_objects, inuse_space,",
	"                    inuse_objects (d: the last interval's rate or since the start)",
	"  h or ?            this help",
	"  q                 quit (Ctrl-C too)",
	"",
	"  Percent is the row's share of the view, with the 95% confidence half-width",
	"  (Wilson; --memory: the estimate's, from the sampled allocations); dim rows have",
	"  too few samples to rank. Process \"name +\" is",
	"  several processes of one program, [several] several programs.",
	"",
	"  any key goes back",
};

static void draw_help(void)
{
	erase();
	for (size_t i = 0; i < ARRAY_SIZE(help_lines) && (int)i < LINES; i++)
		mvaddnstr(i, 0, help_lines[i], COLS);
	refresh();
}

/* callers, then callees, of u->linked, each with its share of the function's stacks */
static void draw_links(struct top_tui *u, int width)
{
	const struct callchain_links *l = &u->links;
	char line[1024], name[4 * 256];
	int y = HEAD_LINES;

	snprintf(line, sizeof(line), "%s (%s): in %" PRIu64 " sampled stacks", str__escape(u->linked_sym,
		 name, sizeof(name)), path__base(u->linked_dso), l->total);
	if (u->links_age >= 0.5)	/* a graph kept from an earlier refresh (top__callchain) */
		snprintf(line + strlen(line), sizeof(line) - strlen(line), ", as of %.0f s ago",
			 u->links_age);
	attron(A_BOLD);
	mvaddnstr(y++, 0, line, width);
	attroff(A_BOLD);
	for (int pass = 0; pass < 2 && y < LINES - 1; pass++) {
		const struct callchain_link *k = pass ? l->callees : l->callers;
		size_t nr = pass ? l->nr_callees : l->nr_callers;

		y++;
		mvaddnstr(y++, 0, pass ? "  called (callees):" : "  called by (callers):", width);
		if (!nr && y < LINES - 1)
			mvaddnstr(y++, 0, pass ? "    none: it is where the samples fell" :
				  "    none: the outermost frame", width);
		for (size_t i = 0; i < nr && y < LINES - 1 - (pass ? 0 : 3); i++) {
			snprintf(line, sizeof(line), "    %6.2f%%  %s%s  %s", l->total ? 100.0 * k[i].count / l->total : 0,
				 k[i].kernel ? "[k] " : "", str__escape(k[i].sym, name, sizeof(name)),
				 path__base(k[i].dso));
			mvaddnstr(y++, 0, line, width);
		}
	}
}

static void draw(struct top_tui *u, struct top *t, const struct top_view *v)
{
	int width = COLS < 1024 ? COLS : 1023, body = LINES - HEAD_LINES - 1;
	char l1[1024], l2[1024], line[1024];

	if (u->mode == MODE_HELP) {
		draw_help();
		return;
	}
	if (body < 1)
		body = 1;
	if (u->sel >= u->nr_rows)
		u->sel = u->nr_rows ? u->nr_rows - 1 : 0;
	if (u->sel < u->first)
		u->first = u->sel;
	if (u->sel >= u->first + body)
		u->first = u->sel - body + 1;
	erase();
	top__format_header(top__status(t), v, u->total, width, l1, l2, sizeof(l1));
	attron(A_BOLD);
	mvaddnstr(0, 0, l1, width);
	attroff(A_BOLD);
	mvaddnstr(1, 0, l2, width);
	top__format_titles(v, width, line, sizeof(line));
	attron(A_REVERSE);
	mvhline(2, 0, ' ', width);
	mvaddnstr(2, 0, line, width);
	attroff(A_REVERSE);
	for (int i = 0; u->mode != MODE_LINKS && i < body && u->first + i < u->nr_rows; i++) {
		const struct hist_row *r = &u->rows[u->first + i];
		/* --memory: the estimate's interval, half of the amount or more */
		bool low = v->memory ? 1.96 * sqrt(r->var) >= r->count / 2 :
			   hist__low_confidence(llround(r->count), llround(u->total));
		int attr = u->first + i == u->sel ? A_REVERSE : low ? A_DIM : 0;

		top__format_row(v, r, u->total, width, line, sizeof(line));
		attron(attr);
		if (attr & A_REVERSE)
			mvhline(HEAD_LINES + i, 0, ' ', width);
		mvaddnstr(HEAD_LINES + i, 0, line, width);
		attroff(attr);
	}
	if (u->mode == MODE_LINKS)
		draw_links(u, width);
	else if (!u->nr_rows)
		mvaddnstr(HEAD_LINES, 0, "no samples in this view yet", width);
	if (u->mode == MODE_FILTER)
		snprintf(line, sizeof(line), "filter: %s_  (Enter: apply, Esc: cancel, empty: none)", u->input);
	else
		snprintf(line, sizeof(line), "%s", u->message);
	mvaddnstr(LINES - 1, 0, line, width);
	refresh();
}

/* the links of the function chosen, again (the stacks grew) */
static void refresh_links(struct top_tui *u, struct top *t)
{
	callchain__links_free(&u->links);
	u->linked.sym = u->linked_sym;
	u->linked.dso = u->linked_dso;
	u->links_age = 0;
	if (top__links(t, &u->linked, &u->links) == -ENOENT) {
		u->mode = MODE_ROWS;
		snprintf(u->message, sizeof(u->message), "no call stacks: run top with -g");
		return;
	}
	u->links_age = top__callchain_age(t);
}

int top_tui__refresh(struct top_tui *u, struct top *t, struct top_view *v)
{
	int err = top__rows(t, v, &u->rows, &u->nr_rows, &u->total);

	if (err)
		return err;
	if (u->mode == MODE_LINKS)
		refresh_links(u, t);
	draw(u, t, v);
	return 0;
}

static void zoom_in(struct top_tui *u, struct top_view *v)
{
	const struct hist_row *r;
	struct top_view next = *v;
	char name[4 * 64];

	if (u->sel >= u->nr_rows)
		return;
	r = &u->rows[u->sel];
	if (u->depth >= ZOOM_DEPTH) {
		snprintf(u->message, sizeof(u->message), "zoomed in as far as it goes: Backspace to go back");
		return;
	}
	if (v->key == SORT_CGROUP || (r->many_pids && !r->many_cgroups)) {
		next.zoom_cgroup = r->cgroup_id;
		next.zoomed_cgroup = true;
		next.key = SORT_PID;
		snprintf(u->message, sizeof(u->message), "zoomed into %s; Backspace to go back",
			 str__escape(r->container, name, sizeof(name)));
	} else if (!r->many_pids) {
		next.zoom_pid = r->pid;
		next.key = SORT_SYM;
		snprintf(u->message, sizeof(u->message), "zoomed into %s %u; Backspace to go back",
			 str__escape(r->comm, name, sizeof(name)), r->pid);
	} else {
		snprintf(u->message, sizeof(u->message), "this row spans several containers: nothing to zoom into");
		return;
	}
	u->stack[u->depth++] = *v;
	*v = next;
	u->sel = u->first = 0;
}

static void zoom_out(struct top_tui *u, struct top_view *v)
{
	struct top_view back;

	if (!u->depth) {
		snprintf(u->message, sizeof(u->message), "not zoomed in");
		return;
	}
	back = u->stack[--u->depth];

	/* the grouping and the zoom go back; the order, the mode and the filter stay */
	v->key = back.key;
	v->zoom_pid = back.zoom_pid;
	v->zoom_cgroup = back.zoom_cgroup;
	v->zoomed_cgroup = back.zoomed_cgroup;
	u->sel = u->first = 0;
	snprintf(u->message, sizeof(u->message), u->depth ? "zoomed out one level" : "h: help  q: quit");
}

static enum tui_action filter_key(struct top_tui *u, struct top_view *v, int c)
{
	char filter[4 * sizeof(v->filter)];
	size_t len = strlen(u->input);

	switch (c) {
	case '\n':
	case KEY_ENTER:
		snprintf(v->filter, sizeof(v->filter), "%s", u->input);
		u->mode = MODE_ROWS;
		u->sel = u->first = 0;
		snprintf(u->message, sizeof(u->message), v->filter[0] ? "filter: %s" : "no filter",
			 str__escape(v->filter, filter, sizeof(filter)));
		return TUI_REDRAW;
	case 27:	/* Esc */
		u->mode = MODE_ROWS;
		return TUI_REDRAW;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		if (len)
			u->input[len - 1] = 0;
		return TUI_REDRAW;
	default:
		if (c >= 32 && c < 127 && len + 1 < sizeof(u->input)) {
			u->input[len] = c;
			u->input[len + 1] = 0;
		}
		return TUI_REDRAW;
	}
}

enum tui_action top_tui__key(struct top_tui *u, struct top *t, struct top_view *v, int timeout_ms)
{
	int body = LINES - HEAD_LINES - 1;
	bool regroup = false;
	int c;

	timeout(timeout_ms);
	c = getch();
	if (c == ERR)
		return TUI_NONE;
	if (c == KEY_RESIZE) {
		draw(u, t, v);
		return TUI_REDRAW;
	}
	if (u->mode == MODE_FILTER) {
		regroup = filter_key(u, v, c) == TUI_REDRAW && u->mode == MODE_ROWS;
		goto out;
	}
	if (u->mode == MODE_HELP) {
		u->mode = MODE_ROWS;
		goto out;
	}
	if (u->mode == MODE_LINKS && c != 'q' && c != 'Q') {
		u->mode = MODE_ROWS;	/* any key goes back to the rows */
		snprintf(u->message, sizeof(u->message), "h: help  q: quit");
		goto out;
	}
	switch (c) {
	case 'q':
	case 'Q':
	case KEY_F(10):
		return TUI_QUIT;
	case 'h':
	case '?':
	case KEY_F(1):
		u->mode = MODE_HELP;
		break;
	case '\t':
	case 'g':
		v->key = top__next_key(v->key);
		regroup = true;
		break;
	case '1': case '2': case '3': case '4': case '5':
		v->key = top_keys[c - '1'];
		regroup = true;
		break;
	case 's':
		v->order = (v->order + 1) % TOP_NR_ORDERS;
		regroup = true;
		break;
	case 'd':
		v->decay = !v->decay;
		regroup = true;
		break;
	case 'p':
	case ' ':
		top__status(t)->paused = !top__status(t)->paused;
		snprintf(u->message, sizeof(u->message),
			 top__status(t)->paused ? "paused: p to go on" : "h: help  q: quit");
		break;
	case 'm':
		regroup = next_memory_view(u, v);
		break;
	case 'c':
		if (v->key != SORT_SYM || u->sel >= u->nr_rows) {
			snprintf(u->message, sizeof(u->message), "c: callers and callees of a function "
				 "(the functions view, 1)");
			break;
		}
		snprintf(u->linked_sym, sizeof(u->linked_sym), "%s", u->rows[u->sel].sym ? u->rows[u->sel].sym : "");
		snprintf(u->linked_dso, sizeof(u->linked_dso), "%s", u->rows[u->sel].dso ? u->rows[u->sel].dso : "");
		u->mode = MODE_LINKS;
		refresh_links(u, t);
		if (u->mode == MODE_LINKS)
			snprintf(u->message, sizeof(u->message), "callers and callees, refreshed live: any key "
				 "goes back");
		break;
	case '/':
		u->mode = MODE_FILTER;
		snprintf(u->input, sizeof(u->input), "%s", v->filter);
		break;
	case '\n':
	case KEY_ENTER:
	case KEY_RIGHT:
		zoom_in(u, v);
		regroup = true;
		break;
	case KEY_BACKSPACE:
	case 127:
	case 8:
	case KEY_LEFT:
		zoom_out(u, v);
		regroup = true;
		break;
	case KEY_UP:
	case 'k':
		if (u->sel)
			u->sel--;
		break;
	case KEY_DOWN:
	case 'j':
		if (u->sel + 1 < u->nr_rows)
			u->sel++;
		break;
	case KEY_PPAGE:
		u->sel = u->sel > (size_t)body ? u->sel - body : 0;
		break;
	case KEY_NPAGE:
		u->sel += body;
		break;
	case KEY_HOME:
		u->sel = 0;
		break;
	case KEY_END:
		u->sel = u->nr_rows ? u->nr_rows - 1 : 0;
		break;
	default:
		return TUI_NONE;
	}
out:
	if (regroup && top__rows(t, v, &u->rows, &u->nr_rows, &u->total)) {
		error("cannot group the samples: %s", strerror(ENOMEM));
		return TUI_QUIT;
	}
	draw(u, t, v);
	return TUI_REDRAW;
}
