// SPDX-License-Identifier: GPL-2.0-only
/*
 * tcgprof: a QEMU TCG plugin (plugin API version 1, QEMU 7.2) that counts
 * the guest instructions executed at each guest PC.
 *
 *   qemu-system-x86_64 ... -plugin tcgprof.so,out=PREFIX[,mode=tb|insn]
 *       [,user=on|off][,start=on|off][,final=on|off]
 *
 * Counting. Each translated block gets one 64-bit counter that an inline
 * op (no helper call) adds 1 to every time the block runs (mode=tb, the
 * default); every instruction of the block is credited with that count.
 * mode=insn gives each instruction its own inline counter instead: exact
 * also when a block is left part-way (an exception, or an I/O access that
 * icount makes QEMU re-execute as a block of its own), at about one more
 * host load/add/store per guest instruction. Blocks that hold a marker
 * instruction are always counted per instruction, so that a reset or dump
 * takes effect exactly at the marker. Counting is what -icount counts: one
 * per block execution per instruction, so a `rep` string instruction,
 * which TCG runs as one block execution per iteration, counts once per
 * iteration (plus the final check that finds the count register zero).
 *
 * Markers. The guest steers the plugin with a no-op instruction no
 * compiler or assembler emits: `nopl disp32(%rax)` (0f 1f 80 + disp32,
 * optionally after an 0x67 prefix, which 16-bit code needs) whose
 * displacement is 0x5046CCAA, CC a command and AA its argument:
 *   CC = 1 reset: forget what was counted so far
 *   CC = 2 start: count from here (after stop, or with start=off)
 *   CC = 3 stop:  stop counting (what was counted is kept)
 *   CC = 4 dump:  write the counts so far to PREFIX.AA (AA decimal)
 * The marker instructions themselves are never counted. On a CPU without
 * the plugin they are plain NOPs.
 *
 * Output, one file per dump (PREFIX.final at exit when final=on, the
 * default): comment lines starting with '#' (the totals), then one line per
 * guest PC that ran, "PC COUNT" in hex and decimal, sorted by PC. Only
 * kernel-half PCs (bit 63 set) are listed unless user=on; the totals count
 * everything.
 *
 * The counters are plain (non-atomic) adds: with more than one vCPU under
 * multi-threaded TCG some counts may be lost. Under -icount (one thread for
 * all vCPUs) they are exact.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MARK_TAG	0x5046u
enum { CMD_RESET = 1, CMD_START = 2, CMD_STOP = 3, CMD_DUMP = 4 };

/*
 * One record per distinct translated block: start address, instruction
 * count and a hash of its bytes (a block retranslated after a flush finds
 * its record again). ncnt counters: 1 (per block) or n (per instruction).
 */
struct rec {
	struct rec *next;	/* hash chain */
	uint64_t vaddr;
	uint64_t hash;
	uint32_t n;
	uint32_t ncnt;
	uint64_t *cnt;		/* bumped by the inline ops */
	uint64_t *base;		/* cnt when counting last (re)started */
	uint64_t *acc;		/* counted in earlier on-periods */
	uint16_t *off;		/* instruction offsets from vaddr */
	uint16_t *mark;		/* 0, or the marker's command << 8 | argument */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rec **htab;
static size_t hsize, nrec;
static struct rec **recs;
static size_t recs_cap;

static const char *out_prefix;
static bool per_insn, with_user, counting = true, final_dump = true;
static unsigned ndumps;

static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static size_t slot(uint64_t vaddr, uint32_t n, uint64_t hash, size_t size)
{
	uint64_t k = vaddr * 0x9e3779b97f4a7c15ull ^ hash ^ n;

	return (size_t)(k ^ (k >> 29)) & (size - 1);
}

static bool grow(void)
{
	size_t nsize = hsize ? hsize * 2 : 1 << 16;
	struct rec **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return false;
	for (size_t i = 0; i < hsize; i++) {
		struct rec *r = htab[i], *next;

		for (; r; r = next) {
			size_t s = slot(r->vaddr, r->n, r->hash, nsize);

			next = r->next;
			r->next = nt[s];
			nt[s] = r;
		}
	}
	free(htab);
	htab = nt;
	hsize = nsize;
	return true;
}

/* The marker command an instruction's bytes carry, or 0. */
static uint16_t marker_of(const unsigned char *d, size_t len)
{
	uint32_t disp;

	if (len == 8 && d[0] == 0x67) {
		d++;
		len--;
	}
	if (len != 7 || d[0] != 0x0f || d[1] != 0x1f || d[2] != 0x80)
		return 0;
	disp = d[3] | d[4] << 8 | (uint32_t)d[5] << 16 | (uint32_t)d[6] << 24;
	if (disp >> 16 != MARK_TAG || !(disp >> 8 & 0xff))
		return 0;
	return disp & 0xffff;
}

static struct rec *new_rec(struct qemu_plugin_tb *tb, uint64_t vaddr,
			   uint32_t n, uint64_t hash, bool marked)
{
	uint32_t ncnt = per_insn || marked ? n : 1;
	size_t sz = sizeof(struct rec) + 3 * ncnt * sizeof(uint64_t) +
		    2 * n * sizeof(uint16_t);
	struct rec *r = calloc(1, sz);

	if (!r)
		return NULL;
	r->vaddr = vaddr;
	r->hash = hash;
	r->n = n;
	r->ncnt = ncnt;
	r->cnt = (uint64_t *)(r + 1);
	r->base = r->cnt + ncnt;
	r->acc = r->base + ncnt;
	r->off = (uint16_t *)(r->acc + ncnt);
	r->mark = r->off + n;
	for (uint32_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		r->off[i] = (uint16_t)(qemu_plugin_insn_vaddr(insn) - vaddr);
		r->mark[i] = marker_of(qemu_plugin_insn_data(insn),
				       qemu_plugin_insn_size(insn));
	}
	return r;
}

static uint64_t value(const struct rec *r, uint32_t i)
{
	uint32_t j = r->ncnt == 1 ? 0 : i;

	return r->acc[j] + (counting ? r->cnt[j] - r->base[j] : 0);
}

struct pcent {
	uint64_t pc;
	uint64_t count;		/* 0: empty slot */
};

static int cmp_pc(const void *a, const void *b)
{
	const struct pcent *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Write PREFIX.NAME; called with the lock held. */
static void dump(const char *name)
{
	uint64_t total = 0, kern = 0, user = 0;
	size_t cap = 1 << 16, used = 0, len;
	struct pcent *map = calloc(cap, sizeof(*map));
	char *path, *tmp;
	FILE *f;

	if (!map)
		goto nomem;
	for (size_t k = 0; k < nrec; k++) {
		const struct rec *r = recs[k];

		for (uint32_t i = 0; i < r->n; i++) {
			uint64_t v, pc;
			size_t s;

			if (r->mark[i])
				continue;
			v = value(r, i);
			if (!v)
				continue;
			pc = r->vaddr + r->off[i];
			total += v;
			if (pc >> 63)
				kern += v;
			else
				user += v;
			if (!(pc >> 63) && !with_user)
				continue;
			if (2 * (used + 1) > cap) {
				size_t ncap = cap * 2;
				struct pcent *nm = calloc(ncap, sizeof(*nm));

				if (!nm)
					goto nomem;
				for (size_t j = 0; j < cap; j++) {
					if (!map[j].count)
						continue;
					s = slot(map[j].pc, 0, 0, ncap);
					while (nm[s].count)
						s = (s + 1) & (ncap - 1);
					nm[s] = map[j];
				}
				free(map);
				map = nm;
				cap = ncap;
			}
			s = slot(pc, 0, 0, cap);
			while (map[s].count && map[s].pc != pc)
				s = (s + 1) & (cap - 1);
			if (!map[s].count) {
				map[s].pc = pc;
				used++;
			}
			map[s].count += v;
		}
	}
	/* Compact and sort. */
	len = 0;
	for (size_t j = 0; j < cap; j++)
		if (map[j].count)
			map[len++] = map[j];
	qsort(map, len, sizeof(*map), cmp_pc);

	if (asprintf(&path, "%s.%s", out_prefix, name) < 0)
		goto nomem;
	if (asprintf(&tmp, "%s.tmp", path) < 0) {
		free(path);
		goto nomem;
	}
	f = fopen(tmp, "w");
	if (!f) {
		char msg[512];

		snprintf(msg, sizeof(msg), "tcgprof: %s: %s\n", tmp, strerror(errno));
		qemu_plugin_outs(msg);
	} else {
		fprintf(f, "# tcgprof 1\n# label %s\n# dump %u\n# mode %s\n",
			name, ndumps, per_insn ? "insn" : "tb");
		fprintf(f, "# counting %s\n", counting ? "on" : "off");
		fprintf(f, "# blocks %zu\n", nrec);
		fprintf(f, "# total %" PRIu64 "\n# kernel %" PRIu64 "\n# user %" PRIu64 "\n",
			total, kern, user);
		for (size_t j = 0; j < len; j++)
			fprintf(f, "%016" PRIx64 " %" PRIu64 "\n", map[j].pc, map[j].count);
		if (fclose(f) != 0 || rename(tmp, path) != 0) {
			char msg[512];

			snprintf(msg, sizeof(msg), "tcgprof: writing %s: %s\n", path,
				 strerror(errno));
			qemu_plugin_outs(msg);
		}
	}
	ndumps++;
	free(tmp);
	free(path);
	free(map);
	return;
nomem:
	free(map);
	qemu_plugin_outs("tcgprof: out of memory while dumping\n");
}

static void marker_exec(unsigned int vcpu, void *udata)
{
	uint16_t m = (uint16_t)(uintptr_t)udata;
	char name[8];

	(void)vcpu;
	pthread_mutex_lock(&lock);
	switch (m >> 8) {
	case CMD_RESET:
		for (size_t k = 0; k < nrec; k++) {
			struct rec *r = recs[k];

			for (uint32_t j = 0; j < r->ncnt; j++) {
				r->acc[j] = 0;
				r->base[j] = r->cnt[j];
			}
		}
		break;
	case CMD_START:
		if (counting)
			break;
		for (size_t k = 0; k < nrec; k++)
			for (uint32_t j = 0; j < recs[k]->ncnt; j++)
				recs[k]->base[j] = recs[k]->cnt[j];
		counting = true;
		break;
	case CMD_STOP:
		if (!counting)
			break;
		for (size_t k = 0; k < nrec; k++) {
			struct rec *r = recs[k];

			for (uint32_t j = 0; j < r->ncnt; j++)
				r->acc[j] += r->cnt[j] - r->base[j];
		}
		counting = false;
		break;
	case CMD_DUMP:
		snprintf(name, sizeof(name), "%u", m & 0xff);
		dump(name);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&lock);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint32_t n = (uint32_t)qemu_plugin_tb_n_insns(tb);
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	uint64_t hash = 0xcbf29ce484222325ull;
	bool marked = false;
	struct rec *r;
	size_t s;

	(void)id;
	for (uint32_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		size_t len = qemu_plugin_insn_size(insn);
		const void *data = qemu_plugin_insn_data(insn);
		uint8_t l8 = (uint8_t)len;

		hash = fnv(hash, &l8, 1);
		hash = fnv(hash, data, len);
		if (marker_of(data, len))
			marked = true;
	}

	pthread_mutex_lock(&lock);
	if (nrec >= hsize && !grow()) {
		pthread_mutex_unlock(&lock);
		qemu_plugin_outs("tcgprof: out of memory: block not counted\n");
		return;
	}
	s = slot(vaddr, n, hash, hsize);
	for (r = htab[s]; r; r = r->next)
		if (r->vaddr == vaddr && r->n == n && r->hash == hash)
			break;
	if (!r) {
		if (nrec == recs_cap) {
			size_t ncap = recs_cap ? recs_cap * 2 : 1 << 16;
			struct rec **nr = realloc(recs, ncap * sizeof(*nr));

			if (!nr)
				goto nomem;
			recs = nr;
			recs_cap = ncap;
		}
		r = new_rec(tb, vaddr, n, hash, marked);
		if (!r)
			goto nomem;
		r->next = htab[s];
		htab[s] = r;
		recs[nrec++] = r;
	}
	pthread_mutex_unlock(&lock);

	/* r is never freed, so the counters outlive every translation. */
	if (r->ncnt == 1) {
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &r->cnt[0], 1);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (r->mark[i])
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_exec,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)r->mark[i]);
		else
			qemu_plugin_register_vcpu_insn_exec_inline(insn,
								   QEMU_PLUGIN_INLINE_ADD_U64,
								   &r->cnt[i], 1);
	}
	return;
nomem:
	pthread_mutex_unlock(&lock);
	qemu_plugin_outs("tcgprof: out of memory: block not counted\n");
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	if (!final_dump)
		return;
	pthread_mutex_lock(&lock);
	dump("final");
	pthread_mutex_unlock(&lock);
}

static bool bool_arg(const char *arg, const char *name, bool *val, bool *bad)
{
	size_t len = strlen(name);

	if (strncmp(arg, name, len) != 0 || arg[len] != '=')
		return false;
	if (!qemu_plugin_bool_parse(name, arg + len + 1, val))
		*bad = true;
	return true;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool bad = false;

		if (strncmp(a, "out=", 4) == 0 && a[4]) {
			out_prefix = a + 4;
		} else if (strcmp(a, "mode=tb") == 0) {
			per_insn = false;
		} else if (strcmp(a, "mode=insn") == 0) {
			per_insn = true;
		} else if (bool_arg(a, "user", &with_user, &bad) ||
			   bool_arg(a, "start", &counting, &bad) ||
			   bool_arg(a, "final", &final_dump, &bad)) {
			if (bad)
				goto usage;
		} else {
			goto usage;
		}
	}
	if (!out_prefix)
		goto usage;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
usage:
	fprintf(stderr, "tcgprof: arguments: out=PREFIX [mode=tb|insn] [user=on|off] "
		"[start=on|off] [final=on|off]\n");
	return -1;
}
