// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live recordings with the finer sample keys: threads named as they rename themselves and
 * their shares (the workers fixture: worker-alpha 2/3, worker-beta 1/3 of the CPU time),
 * report's filters on them, CPUs, and time slices on both sides of a phase change. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "helpers.h"
#include "hsbpf.h"

TestSuite(live_threads, .fini = cleanup_tmpdir, .timeout = 90);

/* the value printed after "word " in text */
static long long said(const char *text, const char *word)
{
	const char *at = strstr(text, word);

	cr_assert(at, "'%s' not in: %s", word, text);
	return atoll(at + strlen(word) + 1);
}

/* the samples of the CSV rows whose text holds what */
static long long csv_samples(const char *csv, const char *what)
{
	long long n = 0;

	for (const char *l = strchr(csv, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		const char *e = strchrnul(l + 1, '\n');
		char line[1024];

		snprintf(line, sizeof(line), "%.*s", (int)(e - l - 1), l + 1);
		if (strstr(line, what))
			n += atoll(line);
	}
	return n;
}

Test(live_threads, threads_are_keyed_and_named)
{
	struct run_result r, q;
	struct profile *p;
	long long alpha, beta, total, a, b;
	char tid[32];

	run(&r, "%s record --per-cpu -o %s -- %s 0.4", hsbpf_bin(), profile_path(),
	    fixture("workers"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	alpha = said(r.out, "worker-alpha");
	beta = said(r.out, "worker-beta");
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect(profile__has_key(p, "tid") && profile__has_key(p, "cpu") &&
		  !profile__has_key(p, "time"), "keys '%s'", p->meta.sample_keys);
	cr_expect_str_eq(profile__thread_name(p, p->thread_comms ? p->thread_comms[0].pid : 0,
					      alpha, UINT64_MAX) ?: "", "worker-alpha");
	for (size_t i = 0; i < p->nr_samples; i++)
		cr_expect_lt(profile__sample_key(p, i)->cpu, p->meta.nr_cpus);
	profile__free(p);

	/* perf's TID:name, with the shares the threads' CPU times make */
	run(&r, "%s report -i %s --sort tid --format csv", hsbpf_bin(), profile_path());
	cr_assert_eq(r.status, 0, "%s", r.err);
	total = csv_samples(r.out, "");
	snprintf(tid, sizeof(tid), "%lld:worker-alpha", alpha);
	a = csv_samples(r.out, tid);
	snprintf(tid, sizeof(tid), "%lld:worker-beta", beta);
	b = csv_samples(r.out, tid);
	cr_expect_gt(total, 600, "%s", r.out);
	expect_share(a, total, 2.0 / 3, "worker-alpha");
	expect_share(b, total, 1.0 / 3, "worker-beta");

	/* a thread's name is its comm; --tid keeps that thread's samples, in every format */
	run(&q, "%s report -i %s --sort comm --tid %lld --format csv", hsbpf_bin(), profile_path(), beta);
	cr_assert_eq(q.status, 0, "%s", q.err);
	cr_expect_eq(csv_samples(q.out, ""), b, "%s", q.out);
	cr_expect_eq(csv_samples(q.out, "worker-beta"), b, "%s", q.out);
	run(&q, "%s report -i %s --comm worker-alpha --format json", hsbpf_bin(), profile_path());
	cr_expect(strstr(q.out, "\"total_samples\":") &&
		  atoll(strstr(q.out, "\"total_samples\":") + 16) == a, "want %lld: %.300s", a, q.out);
	run(&q, "%s report -i %s --sort tid --format json", hsbpf_bin(), profile_path());
	cr_expect(strstr(q.out, "\"comm\":\"worker-alpha\""), "%.500s", q.out);
	/* CPUs: the rows add up to the whole; one CPU's filter keeps its row */
	run(&q, "%s report -i %s --sort cpu --format csv", hsbpf_bin(), profile_path());
	cr_expect_eq(csv_samples(q.out, ""), total, "%s", q.out);
	run(&r, "%s report -i %s --cpu 0 --sort cpu --format csv", hsbpf_bin(), profile_path());
	cr_expect_eq(csv_samples(r.out, ""), csv_samples(q.out, ",000"), "%s / %s", r.out, q.out);
	/* --symbols and --dso: the sampled function's samples only */
	run(&q, "%s report -i %s --symbols alpha_work --dso workers --format csv", hsbpf_bin(),
	    profile_path());
	cr_expect_gt(csv_samples(q.out, "alpha_work"), 0, "%s", q.out);
	cr_expect_eq(csv_samples(q.out, ""), csv_samples(q.out, "alpha_work"), "%s", q.out);
}

/* time buckets of 50 ms: everything before the switch (less a margin) is phase_one, after it
 * phase_two; flat and folded alike; the slices either side of any point add up to all */
Test(live_threads, time_slices_split_a_phase_change)
{
	struct run_result r, q;
	struct profile *p;
	double rel, total;
	long long before, after;

	run(&r, "%s record -g --time-buckets=50 -o %s -- %s phases 0.4", hsbpf_bin(), profile_path(),
	    fixture("workers"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect_eq(p->meta.time_bucket_ns, 50000000);
	rel = (said(r.out, "switch") - (double)p->meta.start_mono_ns) / 1e9;
	total = profile__total_samples(p);
	profile__free(p);
	cr_assert_gt(rel, 0);

	run(&q, "%s report -i %s --no-call-graph --time ,%.3f --format csv", hsbpf_bin(), profile_path(),
	    rel - 0.1);
	cr_assert_eq(q.status, 0, "%s", q.err);
	before = csv_samples(q.out, "");
	cr_expect_gt(csv_samples(q.out, "phase_one"), 0.8 * before, "%s", q.out);
	cr_expect_eq(csv_samples(q.out, "phase_two"), 0, "%s", q.out);
	run(&q, "%s report -i %s --no-call-graph --time %.3f, --format csv", hsbpf_bin(), profile_path(),
	    rel + 0.1);
	after = csv_samples(q.out, "");
	cr_expect_gt(csv_samples(q.out, "phase_two"), 0.8 * after, "%s", q.out);
	cr_expect_eq(csv_samples(q.out, "phase_one"), 0, "%s", q.out);
	cr_expect_gt(before + after, 0.6 * total);
	run(&q, "%s report -i %s --time %.3f, --format folded", hsbpf_bin(), profile_path(), rel + 0.1);
	cr_expect(strstr(q.out, "phase_two") && !strstr(q.out, "phase_one"), "%s", q.out);
	/* a partition: the two sides of the switch hold every sample */
	run(&q, "%s report -i %s --no-call-graph --time ,%.3f --format csv", hsbpf_bin(), profile_path(), rel);
	before = csv_samples(q.out, "");
	run(&q, "%s report -i %s --no-call-graph --time %.3f, --format csv", hsbpf_bin(), profile_path(), rel);
	after = csv_samples(q.out, "");
	cr_expect_eq(before + after, total, "%lld + %lld at %.3f s: %s", before, after, rel, q.out);
}

/* a key the profile was recorded without is a clear error, not an empty report; a recording
 * without the options has none of the keys (as many slots as before) */
Test(live_threads, keys_not_recorded_are_refused)
{
	static const char *const asks[] = {
		"--sort tid", "--sort cpu", "--tid 1", "--cpu 0", "--time 0,1",
	};
	struct run_result r;
	struct profile *p;

	run(&r, "%s record --no-per-thread -o %s -- %s 0.1", hsbpf_bin(), profile_path(),
	    fixture("workers"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect_eq(p->nr_sample_keys, 0);
	cr_expect_str_eq(p->meta.sample_keys, "");
	/* the thread names are recorded anyway: they cost nothing per sample */
	cr_expect_geq(p->nr_thread_comms, 2);
	profile__free(p);
	for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		run(&r, "%s report -i %s %s", hsbpf_bin(), profile_path(), asks[i]);
		cr_expect_eq(r.status, 1, "%s: %d", asks[i], r.status);
		cr_expect(strstr(r.err, "record with --") || strstr(r.err, "recorded with --"), "%s: %s",
			  asks[i], r.err);
	}
	run(&r, "%s report -i %s --time 2,1", hsbpf_bin(), profile_path());
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "invalid --time '2,1'"), "%s", r.err);
	run(&r, "%s record --time-buckets=0 -o %s -- true", hsbpf_bin(), profile_path());
	cr_expect_eq(r.status, 2, "%s", r.err);
	/* by default: threads, and nothing else */
	run(&r, "%s record -o %s -- true", hsbpf_bin(), profile_path());
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect_str_eq(p->meta.sample_keys, "tid");
	profile__free(p);
}

/* top's process view shows each thread under its own name */
Test(live_threads, top_shows_thread_names)
{
	struct run_result r;
	char cmd[1024];
	pid_t w;

	snprintf(cmd, sizeof(cmd), "exec %s 5", fixture("workers"));
	w = spawn(cmd);
	wait_descendant(w, "workers", 3);
	run(&r, "timeout 30 %s top --stdio -d 1 -n 2 -p %d --sort processes --rows 20 --width 120",
	    hsbpf_bin(), w);
	reap(w);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "worker-alpha") && strstr(r.out, "worker-beta"), "%s", r.out);
}

/* record --timeline: buckets of 10 ms by default, and speedscope's evented time line of the
 * worker puts phase_one before phase_two (a flame chart, in time) */
Test(live_threads, the_timeline_puts_phases_in_order)
{
	struct run_result r;
	struct profile *p;
	double one = 0, two = 0;

	run(&r, "%s record -g --timeline -o %s -- %s phases 0.4", hsbpf_bin(), profile_path(),
	    fixture("workers"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect_eq(p->meta.time_bucket_ns, 10000000);
	profile__free(p);
	run(&r, "%s report -i %s --format speedscope -o %s/tl.json && node -e '"
	    "const d = JSON.parse(require(\"fs\").readFileSync(\"%s/tl.json\")); const at = {};"
	    "for (const p of d.profiles) { if (p.type !== \"evented\") continue;"
	    " for (const e of p.events) { const n = d.shared.frames[e.frame].name;"
	    "  if (e.type === \"O\" && /phase_(one|two)/.test(n)) { const k = n.match(/phase_\\w+/)[0];"
	    "   (at[k] = at[k] || []).push(e.at); } } }"
	    "const mean = a => a.reduce((x, y) => x + y, 0) / a.length;"
	    "console.log(mean(at.phase_one) + \" \" + mean(at.phase_two))'",
	    hsbpf_bin(), profile_path(), tmpdir(), tmpdir());
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(sscanf(r.out, "%lf %lf", &one, &two), 2, "%s", r.out);
	cr_expect_lt(one, two, "phase_one at %.0f ns on average, phase_two at %.0f", one, two);
	run(&r, "%s record --timeline=0 -o %s -- true", hsbpf_bin(), profile_path());
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "invalid --timeline '0'"), "%s", r.err);
}
