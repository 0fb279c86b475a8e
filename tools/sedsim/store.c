// SPDX-License-Identifier: GPL-2.0-only
/*
 * sedsim persistence and media: tables in dir/state (rewritten atomically),
 * user data in dir/media, AES-256-XTS per locking range with the LBA as
 * tweak, so regenerating a range key (GenKey, Revert) destroys its data.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "sedsim-internal.h"

int sim_random(void *buf, size_t len)
{
	if (len > INT32_MAX || RAND_bytes(buf, (int)len) != 1)
		return -EIO;
	return 0;
}

int sim_new_key(struct sim_range *r)
{
	/* XTS rejects equal key halves; random halves differ in practice. */
	do {
		if (sim_random(r->key, sizeof(r->key)))
			return -EIO;
	} while (!memcmp(r->key, r->key + 32, 32));
	return 0;
}

/* Printable PIN, as drives print MSID and PSID. */
static int random_pin(struct sim_pin *p, size_t len)
{
	static const char alphabet[] = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ";
	uint8_t r[OPAL_PIN_MAX];

	if (sim_random(r, len))
		return -EIO;
	for (size_t i = 0; i < len; i++)
		p->pin[i] = (uint8_t)alphabet[r[i] % (sizeof(alphabet) - 1)];
	p->len = (uint8_t)len;
	return 0;
}

void sim_factory_locking_sp(struct sim_state *st)
{
	st->lsp_lifecycle = OPAL_LIFECYCLE_MANUFACTURED_INACTIVE;
	for (unsigned i = 0; i < SEDSIM_ADMINS; i++) {
		memset(&st->admin[i], 0, sizeof(st->admin[i]));
		st->admin[i].try_limit = st->try_limit;
		st->admin_enabled[i] = 0;
	}
	for (unsigned i = 0; i < SEDSIM_USERS; i++) {
		memset(&st->user[i], 0, sizeof(st->user[i]));
		st->user[i].try_limit = st->try_limit;
		st->user_enabled[i] = 0;
	}
	for (unsigned i = 0; i <= SEDSIM_RANGES; i++) {
		struct sim_range *r = &st->range[i];

		r->start = 0;
		r->length = 0;	/* the global range: every LBA no other range has */
		r->rle = r->wle = r->rl = r->wl = 0;
		r->lock_on_reset = OPAL_RESET_POWER_CYCLE;
		/* Opal SSC 4.3.1.6: each range ACE preconfigured to Admins. */
		r->rd_ace = r->wr_ace = r->get_ace = ACE_ADMINS;
		sim_new_key(r);
	}
	st->mbr_enable = 0;
	st->mbr_done = 0;
	st->mbr_done_on_reset = OPAL_RESET_POWER_CYCLE;
	st->sum_ranges = 0;
	st->sum_policy = 0;
}

static int write_file_at(int dirfd, const char *name, const void *buf, size_t len)
{
	char tmp[64];
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != (ssize_t)len || fsync(fd))
		rc = errno ? -errno : -EIO;
	close(fd);
	if (!rc && renameat(dirfd, tmp, dirfd, name))
		rc = -errno;
	return rc;
}

static int sized_file(int dirfd, const char *name, uint64_t size, bool create)
{
	int fd = openat(dirfd, name, O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0), 0600);

	if (fd < 0)
		return -errno;
	if (create && ftruncate(fd, (off_t)size)) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int sedsim_create(const char *dir, const struct sedsim_config *cfg)
{
	struct sim_state *st;
	char psid[OPAL_PIN_MAX + 2];
	int dirfd, fd, rc;
	size_t n;

	if (!cfg->blocks || cfg->blocks > (UINT64_MAX >> 10) || sim_identity_check(cfg))
		return -EINVAL;
	dirfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	st = calloc(1, sizeof(*st));
	if (!st) {
		close(dirfd);
		return -ENOMEM;
	}
	memcpy(st->magic, SEDSIM_MAGIC, sizeof(st->magic));
	st->version = SEDSIM_STATE_VERSION;
	memset(st->serial, ' ', sizeof(st->serial));
	n = cfg->serial ? strlen(cfg->serial) : 0;
	memcpy(st->serial, cfg->serial, n > OPAL_SERIAL_MAX ? OPAL_SERIAL_MAX : n);
	st->blocks = cfg->blocks;
	st->try_limit = cfg->no_try_limit ? 0 : cfg->try_limit ? cfg->try_limit : SEDSIM_DEFAULT_TRY_LIMIT;
	rc = random_pin(&st->msid, 32);
	if (!rc)
		rc = random_pin(&st->psid, 32);
	st->sid = st->msid;
	st->sid.try_limit = st->try_limit;
	st->psid.try_limit = st->try_limit;
	sim_factory_locking_sp(st);
	for (const char *const *f = (const char *const[]){ "media", "mbr", "datastore", NULL };
	     !rc && *f; f++) {
		uint64_t size = !strcmp(*f, "media") ? cfg->blocks * SEDSIM_BLOCK :
				!strcmp(*f, "mbr") ? SEDSIM_MBR_SIZE : SEDSIM_DATASTORE_SIZE;

		fd = sized_file(dirfd, *f, size, true);
		if (fd < 0)
			rc = fd;
		else
			close(fd);
	}
	if (!rc) {
		memcpy(psid, st->psid.pin, st->psid.len);
		psid[st->psid.len] = '\n';
		rc = write_file_at(dirfd, "psid", psid, st->psid.len + 1u);
	}
	if (!rc)
		rc = write_file_at(dirfd, "state", st, sizeof(*st));
	if (!rc)
		rc = sim_identity_create(dirfd, cfg, st->serial);
	explicit_bzero(st, sizeof(*st));
	explicit_bzero(psid, sizeof(psid));
	free(st);
	close(dirfd);
	return rc;
}

int sedsim_read_psid(const char *dir, char *out, size_t cap)
{
	char path[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/psid", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, out, cap - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	while (n && (out[n - 1] == '\n'))
		n--;
	out[n] = 0;
	return 0;
}

int sim_save(struct sedsim *sim)
{
	return write_file_at(sim->dirfd, "state", &sim->st, sizeof(sim->st));
}

/*
 * A TCG reset event of type (an OPAL_RESET_* bit): the Locking objects and
 * MBRControl whose reset lists hold it react, every session ends (Opal SSC
 * 3.3.5.1) and the HostProperties are forgotten (Core Spec 5.2.2.4.1).
 */
static int tcg_reset(struct sedsim *sim, unsigned type)
{
	struct sim_state *st = &sim->st;

	for (unsigned i = 0; i <= SEDSIM_RANGES; i++) {
		struct sim_range *r = &st->range[i];

		/* LockOnReset locks what is lock-enabled. */
		if (r->lock_on_reset & type) {
			r->rl = r->rl || r->rle;
			r->wl = r->wl || r->wle;
		}
	}
	if (st->mbr_done_on_reset & type)
		st->mbr_done = 0;
	if (type == OPAL_RESET_POWER_CYCLE) {
		/* C_PIN Tries do not persist across power cycles. */
		st->msid.tries = st->sid.tries = st->psid.tries = 0;
		for (unsigned i = 0; i < SEDSIM_ADMINS; i++)
			st->admin[i].tries = 0;
		for (unsigned i = 0; i < SEDSIM_USERS; i++)
			st->user[i].tries = 0;
	}
	memset(&sim->sess, 0, sizeof(sim->sess));
	sim->resp_len = 0;
	sim->comid_resp_len = 0;
	sim->host_max_compacket = SIM_HOST_INITIAL_COMPACKET;
	return sim_save(sim);
}

int sedsim_power_cycle(struct sedsim *sim)
{
	return tcg_reset(sim, OPAL_RESET_POWER_CYCLE);
}

int sedsim_hw_reset(struct sedsim *sim)
{
	return tcg_reset(sim, OPAL_RESET_HARDWARE);
}

bool sedsim_hw_reset_supported(const struct sedsim *sim)
{
	return sim->hw_reset;
}

/* A byte table file of a drive created with smaller tables grows (sparse) to the current size. */
static int table_file_size(int fd, uint64_t size)
{
	struct stat sb;

	if (fstat(fd, &sb))
		return -errno;
	if ((uint64_t)sb.st_size < size && ftruncate(fd, (off_t)size))
		return -errno;
	return 0;
}

int sedsim_open(const char *dir, bool power_on, struct sedsim **out)
{
	struct sedsim *sim = calloc(1, sizeof(*sim));
	int rc = 0, fd;
	ssize_t n;

	*out = NULL;
	if (!sim)
		return -ENOMEM;
	sim->media_fd = sim->mbr_fd = sim->ds_fd = -1;
	sim->dirfd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	sim->dir = strdup(dir);
	if (sim->dirfd < 0 || !sim->dir) {
		rc = sim->dirfd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	fd = openat(sim->dirfd, "state", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	n = read(fd, &sim->st, sizeof(sim->st));
	close(fd);
	if (n != (ssize_t)sizeof(sim->st) || memcmp(sim->st.magic, SEDSIM_MAGIC, 8) ||
	    sim->st.version != SEDSIM_STATE_VERSION) {
		rc = -EINVAL;
		goto fail;
	}
	sim->media_fd = sized_file(sim->dirfd, "media", 0, false);
	sim->mbr_fd = sized_file(sim->dirfd, "mbr", 0, false);
	sim->ds_fd = sized_file(sim->dirfd, "datastore", 0, false);
	if (sim->media_fd < 0 || sim->mbr_fd < 0 || sim->ds_fd < 0) {
		rc = -ENOENT;
		goto fail;
	}
	rc = table_file_size(sim->mbr_fd, SEDSIM_MBR_SIZE);
	if (!rc)
		rc = table_file_size(sim->ds_fd, SEDSIM_DATASTORE_SIZE);
	if (!rc)
		rc = sim_identity_load(sim);
	if (rc)
		goto fail;
	sim->next_tsn = SIM_FIRST_TSN;
	sim->max_compacket = OPAL_IO_BUFFER;
	sim->host_max_compacket = SIM_HOST_INITIAL_COMPACKET;
	if (power_on)
		rc = sedsim_power_cycle(sim);
	if (rc)
		goto fail;
	*out = sim;
	return 0;
fail:
	sedsim_close(sim);
	return rc;
}

void sedsim_close(struct sedsim *sim)
{
	if (!sim)
		return;
	if (sim->media_fd >= 0)
		close(sim->media_fd);
	if (sim->mbr_fd >= 0)
		close(sim->mbr_fd);
	if (sim->ds_fd >= 0)
		close(sim->ds_fd);
	if (sim->dirfd >= 0)
		close(sim->dirfd);
	free(sim->dir);
	explicit_bzero(sim, sizeof(*sim));
	free(sim);
}

uint64_t sedsim_blocks(const struct sedsim *sim)
{
	return sim->st.blocks;
}

const char *sedsim_serial(const struct sedsim *sim)
{
	return sim->st.serial;
}

/*
 * Empty both byte tables (Revert, RevertSP): truncated to nothing and
 * extended again, so the files stay sparse and clearing 138 MiB costs no
 * writes at all.
 */
int sim_tables_clear(struct sedsim *sim)
{
	if (ftruncate(sim->mbr_fd, 0) || ftruncate(sim->mbr_fd, SEDSIM_MBR_SIZE) ||
	    ftruncate(sim->ds_fd, 0) || ftruncate(sim->ds_fd, SEDSIM_DATASTORE_SIZE))
		return -errno;
	return 0;
}

int sim_table_io(struct sedsim *sim, bool mbr, bool write, uint64_t off, void *buf, size_t len)
{
	int fd = mbr ? sim->mbr_fd : sim->ds_fd;
	uint64_t size = mbr ? SEDSIM_MBR_SIZE : SEDSIM_DATASTORE_SIZE;
	ssize_t n;

	if (off > size || len > size - off)
		return -ERANGE;
	n = write ? pwrite(fd, buf, len, (off_t)off) : pread(fd, buf, len, (off_t)off);
	return n == (ssize_t)len ? 0 : -EIO;
}

/* The range an LBA belongs to: a configured range 1..8, else the global one. */
static const struct sim_range *range_of(const struct sim_state *st, uint64_t lba)
{
	for (unsigned i = 1; i <= SEDSIM_RANGES; i++) {
		const struct sim_range *r = &st->range[i];

		if (r->length && lba >= r->start && lba - r->start < r->length)
			return r;
	}
	return &st->range[0];
}

static bool lsp_active(const struct sim_state *st)
{
	return st->lsp_lifecycle == OPAL_LIFECYCLE_MANUFACTURED;
}

static bool shadowed(const struct sim_state *st, uint64_t lba)
{
	return lsp_active(st) && st->mbr_enable && !st->mbr_done &&
	       lba < SEDSIM_MBR_SIZE / SEDSIM_BLOCK;
}

static int xts(const struct sim_range *r, uint64_t lba, bool enc, const uint8_t *in,
	       uint8_t *out)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	uint8_t iv[16] = { 0 };
	int n1 = 0, n2 = 0, ok;

	for (int i = 0; i < 8; i++)
		iv[i] = (uint8_t)(lba >> (8 * i));
	ok = ctx && EVP_CipherInit_ex(ctx, EVP_aes_256_xts(), NULL, r->key, iv, enc) &&
	     EVP_CipherUpdate(ctx, out, &n1, in, SEDSIM_BLOCK) &&
	     EVP_CipherFinal_ex(ctx, out + n1, &n2);
	EVP_CIPHER_CTX_free(ctx);
	return ok && n1 + n2 == SEDSIM_BLOCK ? 0 : -EIO;
}

static enum sedsim_io_status check(const struct sedsim *sim, uint64_t lba, uint32_t count,
				   bool write)
{
	const struct sim_state *st = &sim->st;

	if (lba > st->blocks || count > st->blocks - lba)
		return SEDSIM_IO_RANGE;
	if (!lsp_active(st))
		return SEDSIM_IO_OK;
	for (uint64_t b = lba; b < lba + count; b++) {
		const struct sim_range *r = range_of(st, b);

		if (write && shadowed(st, b))
			return SEDSIM_IO_LOCKED;
		if (shadowed(st, b))
			continue;
		if (write ? (r->wle && r->wl) : (r->rle && r->rl))
			return SEDSIM_IO_LOCKED;
	}
	return SEDSIM_IO_OK;
}

enum sedsim_io_status sedsim_read(struct sedsim *sim, uint64_t lba, uint32_t count, void *buf)
{
	enum sedsim_io_status s = check(sim, lba, count, false);
	uint8_t ct[SEDSIM_BLOCK];
	uint8_t *p = buf;

	if (s)
		return s;
	for (uint32_t i = 0; i < count; i++, p += SEDSIM_BLOCK) {
		uint64_t b = lba + i;

		if (shadowed(&sim->st, b)) {
			if (sim_table_io(sim, true, false, b * SEDSIM_BLOCK, p, SEDSIM_BLOCK))
				return SEDSIM_IO_ERROR;
			continue;
		}
		if (pread(sim->media_fd, ct, sizeof(ct), (off_t)(b * SEDSIM_BLOCK)) != SEDSIM_BLOCK ||
		    xts(range_of(&sim->st, b), b, false, ct, p))
			return SEDSIM_IO_ERROR;
	}
	return SEDSIM_IO_OK;
}

enum sedsim_io_status sedsim_write(struct sedsim *sim, uint64_t lba, uint32_t count,
				   const void *buf)
{
	enum sedsim_io_status s = check(sim, lba, count, true);
	uint8_t ct[SEDSIM_BLOCK];
	const uint8_t *p = buf;

	if (s)
		return s;
	for (uint32_t i = 0; i < count; i++, p += SEDSIM_BLOCK) {
		uint64_t b = lba + i;

		if (xts(range_of(&sim->st, b), b, true, p, ct) ||
		    pwrite(sim->media_fd, ct, sizeof(ct), (off_t)(b * SEDSIM_BLOCK)) != SEDSIM_BLOCK)
			return SEDSIM_IO_ERROR;
	}
	return SEDSIM_IO_OK;
}
