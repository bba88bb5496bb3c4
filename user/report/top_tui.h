/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* top's full-screen view (ncurses): draws the model's rows and turns keys into view changes.
 * The terminal is given back on every way out: quit, a signal, an error, a crash. */
#ifndef HSBPF_TOP_TUI_H
#define HSBPF_TOP_TUI_H

#include "report/top.h"

enum tui_action { TUI_NONE, TUI_REDRAW, TUI_QUIT };

struct top_tui;

/* take over the terminal; NULL (after saying why) when it cannot be driven */
struct top_tui *top_tui__open(void);
/* give the terminal back (idempotent), then print what was said on stderr meanwhile */
void top_tui__close(struct top_tui *u);
/* the data changed: group again and draw */
int top_tui__refresh(struct top_tui *u, struct top *t, struct top_view *v);
/* wait up to timeout_ms for a key and act on it */
enum tui_action top_tui__key(struct top_tui *u, struct top *t, struct top_view *v, int timeout_ms);

#endif /* HSBPF_TOP_TUI_H */
