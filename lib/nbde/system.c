// SPDX-License-Identifier: GPL-2.0-only
/* The real effects of lib/nbde's callbacks (nbde-system.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nbde-clevis.h"
#include "nbde-system.h"
#include "opal-drive-id.h"
#include "opal-lock.h"
#include "opal.h"

/* The longest pause between two background attempts while a prompt waits. */
#define FETCH_BACKOFF_MAX_S 8

static uint64_t sys_now(void *arg)
{
	(void)arg;
	return nbde_now_ms();
}

static void sys_sleep(void *arg, uint64_t ms)
{
	(void)arg;
	usleep((useconds_t)(ms * 1000));
}

static void sys_log(void *arg, const char *entry, const char *msg)
{
	struct nbde_system *s = arg;

	if (entry && entry[0])
		fprintf(s->err, "%s: %s: %s\n", s->prog, entry, msg);
	else
		fprintf(s->err, "%s: %s\n", s->prog, msg);
	fflush(s->err);
}

static const char *entry_transport(const struct nbde_system *s, const struct opaltab_entry *e)
{
	return e->transport[0] ? e->transport : s->transport ? s->transport : "auto";
}

static int sys_find_device(void *arg, const struct opaltab_entry *e, char *path, size_t cap)
{
	(void)arg;
	if (e->dev_kind == OPALTAB_DEV_PATH) {
		if (access(e->dev, F_OK))
			return -ENOENT;
		snprintf(path, cap, "%s", e->dev);
		return 0;
	}
	return opal_drive_find(e->dev_kind == OPALTAB_DEV_SERIAL ? OPAL_DRIVE_BY_SERIAL : OPAL_DRIVE_BY_WWN,
			       e->dev, path, cap);
}

static int sys_open(struct nbde_system *s, const struct opaltab_entry *e, const char *path,
		    struct opal_drive **dev, char *why, size_t whylen)
{
	return opal_drive_open(path, entry_transport(s, e), s->timeout_ms, true, s->extra, dev, why,
			       whylen);
}

/*
 * Nothing on the drive is locked (Level 0 Discovery's Locking feature:
 * locking enabled, Locked clear), as after a warm reboot of a drive that
 * locks only on power loss. Unknown counts as locked.
 */
static int sys_drive_info(void *arg, const struct opaltab_entry *e, const char *path,
			  struct nbde_drive_info *out)
{
	struct nbde_system *s = arg;
	struct opal_drive_ident id;
	struct opal_discovery d;
	struct opal_drive *dev;
	char why[160];
	int rc;

	memset(out, 0, sizeof(*out));
	if (!opal_drive_identify(path, &id))
		snprintf(out->serial, sizeof(out->serial), "%s", id.serial);
	if (sys_open(s, e, path, &dev, why, sizeof(why)))
		return 0;
	rc = dev->be.ops->discovery ? dev->be.ops->discovery(&dev->be, &d) : OPAL_ERR_UNSUPPORTED;
	opal_drive_close(dev);
	out->unlocked = !rc && d.locking && (d.locking_flags & OPAL_LF_ENABLED) &&
			!(d.locking_flags & OPAL_LF_LOCKED);
	return 0;
}

static void reread_report(void *arg, const char *disk, int rc, bool uevent)
{
	struct nbde_system *s = arg;

	if (!rc) {
		if (s->verbose)
			fprintf(s->err, "%s: %s: partition table re-read\n", s->prog, disk);
	} else if (rc == -EBUSY && uevent) {
		fprintf(s->err, "%s: warning: %s: partition table not re-read (busy: a partition is in use); udev told to look at the disk and its partitions again\n",
			s->prog, disk);
	} else {
		fprintf(s->err, "%s: warning: %s: partition table not re-read: %s (in use? run `partprobe %s`)\n",
			s->prog, disk, strerror(-rc), disk);
	}
}

/* What the drive's answer to one range means for the policy. */
static void classify(struct opal_drive *dev, int rc, const char *what, unsigned int user,
		     struct nbde_unlock_out *out)
{
	opal_uid cpin = user ? opal_uid_c_pin_user(user) : opal_uid_c_pin_admin(1);
	char tries[96] = "";

	out->opal_rc = rc;
	/*
	 * Our protocol code tells a refused key (OPAL_ERR_AUTH) from a right
	 * the authority lacks (NOT_AUTHORIZED after it signed in); the
	 * kernel's ioctls give NOT_AUTHORIZED for both.
	 */
	if (rc == OPAL_ST_NOT_AUTHORIZED && strcmp(dev->be.ops->name, "kernel")) {
		out->status = NBDE_DRIVE_DENIED;
		snprintf(out->why, sizeof(out->why), "%s: not authorized: the key was accepted, but this authority may not do it; no try was used",
			 what);
		return;
	}
	if (rc == OPAL_ST_NOT_AUTHORIZED || rc == OPAL_ERR_AUTH) {
		uint64_t used, limit;

		out->status = NBDE_DRIVE_REFUSED;
		if (dev->opal && !opal_tries_left(dev->opal, &OPAL_UID_LOCKINGSP, &cpin, &used, &limit) &&
		    limit)
			snprintf(tries, sizeof(tries), " (%" PRIu64 " of %" PRIu64 " tries left)",
				 used < limit ? limit - used : 0, limit);
		snprintf(out->why, sizeof(out->why), "%s: %s%s", what, opal_strerror(rc), tries);
		return;
	}
	out->status = rc == OPAL_ST_AUTHORITY_LOCKED_OUT ? NBDE_DRIVE_LOCKED_OUT : NBDE_DRIVE_ERROR;
	if (rc == OPAL_ERR_TRANSPORT && dev->opal && opal_dev_errno(dev->opal))
		snprintf(out->why, sizeof(out->why), "%s: %s: %s", what, opal_strerror(rc),
			 strerror(opal_dev_errno(dev->opal)));
	else
		snprintf(out->why, sizeof(out->why), "%s: %s%s", what, opal_strerror(rc),
			 rc == OPAL_ST_AUTHORITY_LOCKED_OUT ?
			 ": power-cycle the drive, then retry with the right key" : "");
}

/* One range locked or unlocked: 0, or -1 with out filled in. */
static int one_range(struct nbde_system *s, const struct nbde_unlock_rq *rq, unsigned int range,
		     const struct opal_key *k, bool unlock, struct nbde_unlock_out *out)
{
	const struct opaltab_entry *e = rq->entry;
	struct opal_lock_request lr = {
		.who = rq->user, .range = range, .keep_mbr = e->keep_mbr, .devpath = rq->path,
		.force = rq->force,
		.state = !unlock ? OPAL_LOCKED : e->readonly ? OPAL_UNLOCKED_RO : OPAL_UNLOCKED_RW,
	};
	struct opal_lock_result res;
	struct opal_drive *dev;
	char what[64], why[200];
	int rc;

	snprintf(what, sizeof(what), "%s range %u", unlock ? "unlock" : "lock", range);
	rc = sys_open(s, e, rq->path, &dev, why, sizeof(why));
	if (rc) {
		out->status = NBDE_DRIVE_ERROR;
		out->opal_rc = rc;
		snprintf(out->why, sizeof(out->why), "cannot open %s: %s", rq->path, why);
		return -1;
	}
	/* S3: only the kernel can keep the key; elsewhere it is said not kept. */
	out->can_save = dev->be.ops->can_save;
	lr.save = unlock && rq->save && out->can_save;
	rc = opal_lock_control(&dev->be, k, &lr, &res);
	if (!rc && !unlock && res.check != OPAL_LOCK_CHECK_LOCKED &&
	    res.check != OPAL_LOCK_CHECK_UNREAD)
		rc = -1;
	if (rc) {
		switch (res.step) {
		case OPAL_LOCK_IN_USE:
			out->status = NBDE_DRIVE_ERROR;
			out->opal_rc = -EBUSY;
			snprintf(out->why, sizeof(out->why), "%s: %s, and locking the range would pull the data from under it: unmount it or close what holds it first (or add --force)",
				 what, res.in_use);
			break;
		case OPAL_LOCK_NOT_LOCKED:
			out->status = NBDE_DRIVE_ERROR;
			out->opal_rc = OPAL_ERR_PROTOCOL;
			snprintf(out->why, sizeof(out->why), "%s: the range reads back unlocked (not configured, or locking not enabled on it: run `opalctl setup`)",
				 what);
			break;
		default:
			classify(dev, rc, what, rq->user, out);
		}
		opal_drive_close(dev);
		return -1;
	}
	out->saved = res.saved;
	if (res.mbr_rc)
		fprintf(s->err, "%s: warning: the shadow MBR is enabled and still shown (MBR Done not set: %s): run `opalctl mbr --done` with the Admin1 key\n",
			s->prog, opal_strerror(res.mbr_rc));
	opal_drive_close(dev);
	if (unlock)
		opal_reread_partitions(rq->path, reread_report, s);
	return 0;
}

static int sys_lock_ranges(void *arg, const struct nbde_unlock_rq *rq, const struct secret *key,
			   bool unlock, struct nbde_unlock_out *out)
{
	struct nbde_system *s = arg;
	struct opal_key k;

	memset(out, 0, sizeof(*out));
	if (key->len > OPAL_PIN_MAX) {
		out->status = NBDE_DRIVE_ERROR;
		out->opal_rc = OPAL_ERR_INVAL;
		snprintf(out->why, sizeof(out->why), "the key is longer than a PIN (%u bytes)",
			 OPAL_PIN_MAX);
		return -1;
	}
	k.data = key->data;
	k.len = key->len;
	for (unsigned int i = 0; i < rq->entry->nranges; i++) {
		bool saved = out->saved;

		if (one_range(s, rq, rq->entry->ranges[i], &k, unlock, out))
			return -1;
		out->saved = i ? saved && out->saved : out->saved;
	}
	out->status = NBDE_DRIVE_OK;
	return 0;
}

static int sys_clevis(void *arg, const char *jwe, unsigned int timeout_s, struct secret *out,
		      char *why, size_t whylen)
{
	int rc;

	(void)arg;
	rc = clevis_decrypt(jwe, timeout_s, out, why, whylen);
	if (!rc && out->len > OPAL_PIN_MAX) {
		snprintf(why, whylen, "%s: the sealed key is longer than a PIN", jwe);
		explicit_bzero(out->data, out->cap);
		out->len = 0;
		return -EINVAL;
	}
	return rc;
}

static bool sys_jwe_present(void *arg, const char *jwe)
{
	(void)arg;
	return !access(jwe, R_OK);
}

int nbde_key_file_read(const char *path, bool insecure, struct secret *out, char *why,
		       size_t whylen)
{
	struct stat st;
	ssize_t n;
	int fd, rc = 0;

	out->len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, whylen, "key file %s: %s", path,
			 rc == -ELOOP ? "is a symbolic link (give the file itself)" : strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st)) {
		rc = -errno;
		snprintf(why, whylen, "key file %s: %s", path, strerror(-rc));
	} else if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		snprintf(why, whylen, "key file %s: not a regular file", path);
	} else if (st.st_uid != 0 && st.st_uid != geteuid()) {
		rc = -EPERM;
		snprintf(why, whylen, "key file %s: owned by uid %u, not root: whoever owns it can change the key",
			 path, (unsigned int)st.st_uid);
	} else if ((st.st_mode & (S_IRWXG | S_IRWXO)) && !insecure) {
		rc = -EPERM;
		snprintf(why, whylen, "key file %s can be read or written by group or others (mode %04o): `chmod 600 %s`",
			 path, (unsigned int)(st.st_mode & 07777), path);
	} else if (st.st_size > OPAL_PIN_MAX + 1) {
		rc = -EFBIG;
		snprintf(why, whylen, "key file %s: longer than a PIN (%u bytes)", path, OPAL_PIN_MAX);
	}
	if (rc) {
		close(fd);
		return rc;
	}
	do
		n = read(fd, out->data + out->len, out->cap - out->len);
	while ((n > 0 && (out->len += (size_t)n) < out->cap) || (n < 0 && errno == EINTR));
	rc = n < 0 ? -errno : 0;
	close(fd);
	/* A text key file loses one trailing newline. */
	if (!rc && out->len && out->data[out->len - 1] == '\n')
		out->len--;
	if (!rc && (!out->len || out->len > OPAL_PIN_MAX))
		rc = out->len ? -EFBIG : -ENODATA;
	if (rc) {
		snprintf(why, whylen, "key file %s: %s", path, rc == -ENODATA ? "empty" :
			 rc == -EFBIG ? "longer than a PIN" : strerror(-rc));
		explicit_bzero(out->data, out->cap);
		out->len = 0;
	}
	return rc;
}

static int sys_key_file(void *arg, const char *path, struct secret *out, char *why, size_t whylen)
{
	struct nbde_system *s = arg;

	why[0] = 0;
	return nbde_key_file_read(path, s->insecure_keyfile, out, why, whylen);
}

/*
 * A person: the askpass program (prompt in argv[1], the answer on its
 * stdout), else the terminal with echo off. A prompt that runs out of time
 * or is no longer needed ends with SIGTERM, so that systemd-ask-password
 * or plymouth take their request down; SIGKILL only after a grace period.
 */
static int sys_ask(void *arg, const char *prompt, uint64_t end, struct secret *out, int wake_fd)
{
	struct nbde_system *s = arg;
	uint64_t t = nbde_now_ms();
	int rc;

	out->len = 0;
	if (t >= end)
		return -ETIMEDOUT;
	if (s->askpass) {
		char *const argv[] = { (char *)s->askpass, (char *)prompt, NULL };
		struct child_io io = { .in_fd = 0, .out_fd = -1, .capture = out };
		int fd = -1, st;
		pid_t pid = spawn_child(argv, &io, &fd);

		if (pid < 0)
			return pid;
		rc = capture_output(fd, out, end, wake_fd);
		close(fd);
		if (rc == 1 || rc == -ETIMEDOUT) {
			kill(-pid, SIGTERM);
			reap_child(pid, nbde_now_ms() + NBDE_ASKPASS_GRACE_MS, false);
			explicit_bzero(out->data, out->cap);
			out->len = 0;
			return rc;
		}
		st = reap_child(pid, rc ? 0 : end, rc != 0);
		rc = rc ? rc : st ? -EIO : 0;
		if (rc) {
			explicit_bzero(out->data, out->cap);
			out->len = 0;
			return rc;
		}
	} else {
		int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);

		if (fd < 0 && s->in)
			fd = dup(fileno(s->in));
		if (fd < 0)
			return -ENOTTY;
		rc = secret_read_line_or(out, fd, prompt, (unsigned int)(end - t), wake_fd);
		close(fd);
		if (rc)
			return rc;
	}
	/* An answer loses one trailing newline, as a text key file does. */
	if (out->len && out->data[out->len - 1] == '\n')
		out->len--;
	return out->len ? 0 : -ENODATA;
}

/* The background fetcher: its pid by the fd it writes to. */
#define FETCH_MAX 4
static struct {
	int fd;
	pid_t pid;
	char curl[64];	/* its curl directory, removed when it is over */
} fetchers[FETCH_MAX] = { { -1, 0, "" }, { -1, 0, "" }, { -1, 0, "" }, { -1, 0, "" } };

static int fetch_slot(int fd)
{
	for (int i = 0; i < FETCH_MAX; i++)
		if (fetchers[i].fd == fd)
			return i;
	return -1;
}

/*
 * Try the entry's JWE until end in a process of its own, whose clevis
 * calls say nothing on the console while the prompt is there.
 */
static int sys_fetch_start(void *arg, const struct opaltab_entry *e, uint64_t end)
{
	int p[2], slot = fetch_slot(-1);
	pid_t pid;

	(void)arg;
	if (slot < 0 || curl_home(fetchers[slot].curl, sizeof(fetchers[slot].curl), e->timeout_s))
		return -1;
	if (pipe2(p, O_CLOEXEC)) {
		curl_home_remove(fetchers[slot].curl);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		curl_home_remove(fetchers[slot].curl);
		return -1;
	}
	if (pid == 0) {
		struct secret *key = secret_new();
		unsigned int backoff = 1;
		char why[600];
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		/* One group with its clevis and curl: killing it leaves nothing behind. */
		setpgid(0, 0);
		spawn_group_shared();
		curl_home_shared(fetchers[slot].curl);
		close(p[0]);
		if (null >= 0)
			dup2(null, 2);
		while (key) {
			uint64_t t = nbde_now_ms(), left = t < end ? end - t : 0;
			uint64_t each = (uint64_t)e->timeout_s * 1000;

			if (left < 1000)
				break;
			if (!clevis_decrypt(e->key_path, (unsigned int)((left < each ? left : each) / 1000),
					    key, why, sizeof(why))) {
				bool sent = write(p[1], key->data, key->len) == (ssize_t)key->len;

				secret_free(key);
				_exit(sent ? 0 : 1);
			}
			t = nbde_now_ms();
			if (t + backoff * 1000u >= end)
				break;
			sleep(backoff);
			backoff = backoff * 2 > FETCH_BACKOFF_MAX_S ? FETCH_BACKOFF_MAX_S : backoff * 2;
		}
		secret_free(key);
		_exit(1);
	}
	setpgid(pid, pid);
	close(p[1]);
	fetchers[slot].fd = p[0];
	fetchers[slot].pid = pid;
	return p[0];
}

static void fetch_end(int slot, bool kill_now)
{
	if (fetchers[slot].pid > 0)
		reap_child(fetchers[slot].pid, nbde_now_ms() + 5000, kill_now);
	close(fetchers[slot].fd);
	curl_home_remove(fetchers[slot].curl);
	fetchers[slot].fd = -1;
	fetchers[slot].pid = 0;
}

static int sys_fetch_collect(void *arg, int fd, struct secret *out)
{
	int slot = fetch_slot(fd), rc;

	(void)arg;
	if (slot < 0 || fd < 0)
		return -EINVAL;
	out->len = 0;
	rc = capture_output(fd, out, nbde_now_ms() + 5000, -1);
	if (rc || !out->len || out->len > OPAL_PIN_MAX)
		rc = -ENOKEY;
	fetch_end(slot, rc != 0);
	if (rc) {
		explicit_bzero(out->data, out->cap);
		out->len = 0;
	}
	return rc;
}

static void sys_fetch_stop(void *arg, int fd)
{
	int slot = fetch_slot(fd);

	(void)arg;
	if (slot >= 0 && fd >= 0)
		fetch_end(slot, true);
}

void nbde_system_ops(struct nbde_system *sys, struct nbde_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->arg = sys;
	ops->now_ms = sys_now;
	ops->sleep_ms = sys_sleep;
	ops->log = sys_log;
	ops->find_device = sys_find_device;
	ops->drive_info = sys_drive_info;
	ops->lock_ranges = sys_lock_ranges;
	ops->clevis = sys_clevis;
	ops->jwe_present = sys_jwe_present;
	ops->key_file = sys_key_file;
	ops->ask = sys_ask;
	ops->fetch_start = sys_fetch_start;
	ops->fetch_collect = sys_fetch_collect;
	ops->fetch_stop = sys_fetch_stop;
}

bool nbde_resume_unlocks(const char *path)
{
	char dev[PATH_MAX], sys[PATH_MAX + 32], real[PATH_MAX];
	const char *name;

	if (!realpath(path, dev))
		return false;
	name = strrchr(dev, '/');
	name = name ? name + 1 : dev;
	snprintf(sys, sizeof(sys), "/sys/class/%s/%s", strncmp(name, "nvme", 4) ||
		 strchr(name + 4, 'n') ? "block" : "nvme", name);
	if (!realpath(sys, real))
		return false;
	if (!strncmp(name, "nvme", 4))
		return strstr(real, "/nvme/") && !strstr(real, "/nvme-fabrics/") &&
		       !strstr(real, "/nvme-subsystem/");
	return !strncmp(name, "sd", 2) && strstr(real, "/ata");
}
