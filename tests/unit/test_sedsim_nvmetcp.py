#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""sedsim serve-nvme against malformed and hostile NVMe/TCP streams.

Usage: test_sedsim_nvmetcp.py SEDSIM

Starts the target on a free loopback port and throws crafted PDUs at it:
every framing or R2T-window violation must close that connection, every
bad length inside a command must be answered with an error status, and a
well-behaved connection opened first must be served throughout. Prints TAP.
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile

NQN = 'nqn.2026-11.org.fdekit:stream-test'
PDU_ICREQ, PDU_ICRESP, PDU_H2C_TERM, PDU_CMD, PDU_RSP = 0, 1, 2, 4, 5
PDU_H2C_DATA, PDU_C2H_DATA, PDU_R2T = 6, 7, 9
F_LAST = 0x04
SC_INVALID_FIELD, SC_CMD_SEQ_ERROR, SC_SGL_LENGTH_INVALID = 0x4002, 0x400c, 0x400f
SC_CONNECT_INVALID_PARAM = 0x4182


def hdr(pdu_type, flags, hlen, pdo, plen):
    return struct.pack('<BBBBI', pdu_type, flags, hlen, pdo, plen)


def recvn(s, n):
    b = b''
    while len(b) < n:
        x = s.recv(n - len(b))
        if not x:
            raise EOFError('connection closed')
        b += x
    return b


def recv_pdu(s):
    h = recvn(s, 8)
    return h[0], h + recvn(s, struct.unpack_from('<I', h, 4)[0] - 8)


def sqe(opc, cid, nsid=0, sgl_len=0, dw=None, fctype=None, w16=None):
    b = bytearray(64)
    b[0] = opc
    struct.pack_into('<HI', b, 2, cid, nsid)
    if fctype is not None:
        b[4] = fctype
    struct.pack_into('<I', b, 32, sgl_len)
    b[39] = 0x5a		# transport data block
    for k, v in (dw or {}).items():
        struct.pack_into('<I', b, 4 * k, v)
    for off, v in (w16 or {}).items():
        struct.pack_into('<H', b, off, v)
    return b


class Target:
    def __init__(self, sedsim, drive):
        for _ in range(5):
            probe = socket.socket()
            probe.bind(('127.0.0.1', 0))
            self.port = probe.getsockname()[1]
            probe.close()
            self.proc = subprocess.Popen(
                [sedsim, 'serve-nvme', drive, '--port', str(self.port), '--nqn', NQN],
                stderr=subprocess.PIPE, text=True)
            line = self.proc.stderr.readline()
            if 'serving' in line:
                return
            self.proc.wait()
        raise RuntimeError('sedsim serve-nvme did not start: ' + line)

    def stop(self):
        self.proc.terminate()
        self.log = self.proc.stderr.read()
        return self.proc.wait(timeout=30)


class Conn:
    def __init__(self, target, ic=True):
        self.s = socket.create_connection(('127.0.0.1', target.port))
        self.s.settimeout(10)
        if ic:
            self.s.sendall(hdr(PDU_ICREQ, 0, 128, 0, 128) + bytes(120))
            t, _ = recv_pdu(self.s)
            assert t == PDU_ICRESP, 'no ICResp'

    def cmd(self, q, data=b''):
        if data:
            self.s.sendall(hdr(PDU_CMD, 0, 72, 72, 72 + len(data)) + bytes(q) + data)
        else:
            self.s.sendall(hdr(PDU_CMD, 0, 72, 0, 72) + bytes(q))
        return self.resp()

    def resp(self):
        """(status, data, result, sqhd), or ('r2t', cccid, ttag, offset, length)."""
        data = b''
        while True:
            t, p = recv_pdu(self.s)
            if t == PDU_C2H_DATA:
                data += p[24:]
            elif t == PDU_R2T:
                return ('r2t',) + struct.unpack_from('<HHII', p, 8)
            else:
                assert t == PDU_RSP, 'PDU type %d' % t
                result, sqhd, _, _, status = struct.unpack_from('<QHHHH', p, 8)
                return status >> 1, data, result, sqhd

    def connect(self, qid, cntlid=0xffff, sqsize=31):
        d = bytearray(1024)
        struct.pack_into('<H', d, 16, cntlid)
        d[256:256 + len(NQN)] = NQN.encode()
        d[512:520] = b'nqn.test'
        q = sqe(0x7f, 1, sgl_len=1024, fctype=1, w16={42: qid, 44: sqsize})
        q[39] = 0x01	# in-capsule data block
        r = self.cmd(q, bytes(d))
        assert r[0] == 0, 'connect status %#x' % r[0]
        return r[2] & 0xffff

    def prop(self, off, value=None):
        q = sqe(0x7f, 2, fctype=0 if value is not None else 4)
        struct.pack_into('<I', q, 44, off)
        if value is not None:
            struct.pack_into('<Q', q, 48, value)
        r = self.cmd(q)
        assert r[0] == 0, 'property status %#x' % r[0]
        return r[2]

    def closed(self):
        """True once the target has closed its side (EOF or reset)."""
        try:
            while self.s.recv(65536):
                pass
            return True
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False

    def close(self):
        self.s.close()


def main():
    sedsim = sys.argv[1]
    tmp = tempfile.TemporaryDirectory()
    drive = os.path.join(tmp.name, 'drive')
    os.mkdir(drive)
    subprocess.run([sedsim, 'create', drive, '--blocks', '2048'], check=True)
    target = Target(sedsim, drive)

    admin = Conn(target)
    cntlid = admin.connect(0)
    admin.prop(0x14, 1)		# CC.EN
    io = Conn(target)
    io.connect(1, cntlid, 127)

    def fresh(ic=True):
        return Conn(target, ic)

    def io_conn():
        c = fresh()
        c.connect(1, cntlid, 127)
        return c

    def write_r2t(c, nlb=8):
        r = c.cmd(sqe(0x01, 9, nsid=1, sgl_len=nlb * 512, dw={12: nlb - 1}))
        assert r[0] == 'r2t', 'no R2T'
        return r[1:]

    def h2c(c, flags, cccid, ttag, off, datal, payload):
        c.s.sendall(hdr(PDU_H2C_DATA, flags, 24, 24, 24 + len(payload)) +
                    struct.pack('<HHII', cccid, ttag, off, datal) + bytes(4) + payload)

    def closes(send, ic=True, setup=None):
        def check():
            c = io_conn() if setup else fresh(ic)
            send(c)
            ok = c.closed()
            c.close()
            return ok
        return check

    def status(conn, q, want, data=b''):
        return lambda: conn.cmd(q, data)[0] == want

    def r2t_then(mutate):
        def send(c):
            cccid, ttag, _, length = write_r2t(c)
            mutate(c, cccid, ttag, length)
        return send

    def pending_exhaustion():
        c = io_conn()
        try:
            for i in range(129):	# the queue holds 128
                c.cmd(sqe(0x01, i, nsid=1, sgl_len=128 << 10, dw={12: 255}))
        except (EOFError, ConnectionResetError):
            return True
        finally:
            c.close()
        return False

    def connect_sqsize_zero():
        c = fresh()
        d = bytearray(1024)
        d[256:256 + len(NQN)] = NQN.encode()
        q = sqe(0x7f, 1, sgl_len=1024, fctype=1, w16={42: 0, 44: 0})
        q[39] = 0x01
        r = c.cmd(q, bytes(d))
        c.close()
        return r[0] == SC_CONNECT_INVALID_PARAM and r[2] == 44

    def shutdown_then_enable():
        c = fresh()
        c.connect(0)
        c.prop(0x14, 1 | (1 << 14))
        shut = c.prop(0x1c)
        c.prop(0x14, 1)
        again = c.prop(0x1c)
        c.close()
        return shut == 0x9 and again == 0x1

    def io_outlives_admin():
        a = fresh()
        cn = a.connect(0)
        a.prop(0x14, 1)
        q = io_conn_for(cn)
        before = q.cmd(sqe(0x02, 50, nsid=1, sgl_len=512))[0]
        a.close()
        # The admin connection's thread frees the controller once it reads
        # EOF, asynchronously: ask until it has (bounded), then judge.
        for _ in range(2000):
            after = q.cmd(sqe(0x02, 51, nsid=1, sgl_len=512))[0]
            if after:
                break
        q.close()
        return before == 0 and after == SC_CMD_SEQ_ERROR

    def io_conn_for(cn):
        c = fresh()
        c.connect(1, cn, 127)
        return c

    def admin_sqhd_wraps():
        sqhd = 0
        for i in range(40):
            r = admin.cmd(sqe(0x18, 60 + i))
            assert r[0] == 0
            sqhd = max(sqhd, r[3])
        return sqhd < 32

    def comid_management():
        # Security Send/Receive with protocol 2 (ComID management) reach the
        # TPer: VERIFY_COMID_VALID, then STACK_RESET, as go-tcg-storage sends them.
        dw10 = (2 << 24) | (0x1000 << 8)
        out = []
        for cid, code in ((70, 1), (72, 2)):
            req = struct.pack('>HHI', 0x1000, 0, code) + bytes(504)
            q = sqe(0x81, cid, sgl_len=512, dw={10: dw10, 11: 512})
            q[39] = 0x01
            if admin.cmd(q, req)[0] != 0:
                return False
            r = admin.cmd(sqe(0x82, cid + 1, sgl_len=512, dw={10: dw10, 11: 512}))
            if r[0] != 0:
                return False
            out.append(r[1])
        verify, reset = out
        return (verify[:12] == bytes.fromhex('100000000000000100000022') and
                struct.unpack_from('>I', verify, 12)[0] == 2 and
                reset[:16] == bytes.fromhex('10000000000000020000000400000000'))

    def comid_unknown_request():
        req = struct.pack('>HHI', 0x1000, 0, 7) + bytes(504)
        q = sqe(0x81, 74, sgl_len=512, dw={10: (2 << 24) | (0x1000 << 8), 11: 512})
        q[39] = 0x01
        return admin.cmd(q, req)[0] == SC_INVALID_FIELD

    checks = [
        ('truncated header', closes(lambda c: (c.s.sendall(b'\x00\x00\x80'),
                                              c.s.shutdown(socket.SHUT_WR)), ic=False)),
        ('command PDU with plen 4 GiB', closes(lambda c: c.s.sendall(hdr(PDU_CMD, 0, 72, 0, 0xffffffff)))),
        ('plen below hlen', closes(lambda c: c.s.sendall(hdr(PDU_CMD, 0, 72, 0, 8)))),
        ('pdo inside the header', closes(lambda c: c.s.sendall(hdr(PDU_CMD, 0, 72, 10, 100) + bytes(92)))),
        ('pdo beyond plen', closes(lambda c: c.s.sendall(hdr(PDU_CMD, 0, 72, 200, 100) + bytes(92)))),
        ('header digest flag', closes(lambda c: c.s.sendall(hdr(PDU_CMD, 1, 72, 0, 76) + bytes(68)))),
        ('command before ICReq', closes(lambda c: c.s.sendall(hdr(PDU_CMD, 0, 72, 0, 72) + bytes(64)), ic=False)),
        ('second ICReq', closes(lambda c: c.s.sendall(hdr(PDU_ICREQ, 0, 128, 0, 128) + bytes(120)))),
        ('H2CData for an unknown tag', closes(lambda c: h2c(c, F_LAST, 0, 0, 0, 4, bytes(4)))),
        ('H2CTermReq', closes(lambda c: c.s.sendall(hdr(PDU_H2C_TERM, 0, 24, 0, 24) + bytes(16)))),
        ('unknown PDU type', closes(lambda c: c.s.sendall(hdr(0x42, 0, 24, 0, 24) + bytes(16)))),
        ('H2CData beyond the R2T window', closes(r2t_then(
            lambda c, cid, tt, n: h2c(c, F_LAST, cid, tt, 0, n + 512, bytes(n + 512))), setup=True)),
        ('H2CData offset wrapping 32 bits', closes(r2t_then(
            lambda c, cid, tt, n: h2c(c, F_LAST, cid, tt, 0xfffffe00, 512, bytes(512))), setup=True)),
        ('H2CData DATAL not the PDU data', closes(r2t_then(
            lambda c, cid, tt, n: h2c(c, F_LAST, cid, tt, 0, 1024, bytes(512))), setup=True)),
        ('H2CData LAST before the R2T data ends', closes(r2t_then(
            lambda c, cid, tt, n: h2c(c, F_LAST, cid, tt, 0, 512, bytes(512))), setup=True)),
        ('H2CData all data without LAST', closes(r2t_then(
            lambda c, cid, tt, n: h2c(c, 0, cid, tt, 0, n, bytes(n))), setup=True)),
        ('H2CData with another command id', closes(r2t_then(
            lambda c, cid, tt, n: h2c(c, F_LAST, cid ^ 1, tt, 0, n, bytes(n))), setup=True)),
        ('more writes awaiting data than the queue holds', pending_exhaustion),
        ('Read at LBA 2^64-1 with NLB 65536', status(
            io, sqe(0x02, 20, nsid=1, sgl_len=4096, dw={10: 0xffffffff, 11: 0xffffffff, 12: 0xffff}),
            SC_SGL_LENGTH_INVALID)),
        ('Read past the end', status(io, sqe(0x02, 21, nsid=1, sgl_len=8192, dw={10: 2040, 12: 15}), 0x4080)),
        ('Read with a 256 MiB SGL', status(io, sqe(0x02, 22, nsid=1, sgl_len=1 << 28, dw={12: 7}),
                                           SC_SGL_LENGTH_INVALID)),
        ('Get Log Page with NUMD 2^32', status(
            admin, sqe(0x02, 30, sgl_len=4096, dw={10: 0xffff0002, 11: 0xffff}), SC_SGL_LENGTH_INVALID)),
        ('Security Receive with AL beyond its buffer', status(
            admin, sqe(0x82, 32, sgl_len=512, dw={10: 0x01000100, 11: 0xffffffff}), SC_SGL_LENGTH_INVALID)),
        ('Security Send with AL beyond its data', status(
            admin, sqe(0x81, 34, sgl_len=16, dw={10: 0x0107fe00, 11: 4096}), SC_SGL_LENGTH_INVALID,
            bytes(16))),
        ('Identify into 16 bytes', status(admin, sqe(0x06, 35, sgl_len=16, dw={10: 1}), SC_SGL_LENGTH_INVALID)),
        ('in-capsule data shorter than the SGL', status(admin, sqe(0x81, 37, sgl_len=16), SC_SGL_LENGTH_INVALID,
                                                         bytes(8))),
        ('Connect with 16 bytes of data', lambda: fresh().cmd(
            sqe(0x7f, 1, sgl_len=16, fctype=1), bytes(16))[0] == SC_SGL_LENGTH_INVALID),
        ('Identify before Connect', lambda: fresh().cmd(sqe(0x06, 2, sgl_len=4096, dw={10: 1}))[0] ==
         SC_CMD_SEQ_ERROR),
        ('Connect with SQSIZE 0', connect_sqsize_zero),
        ('CSTS.SHST clears when the controller is enabled again', shutdown_then_enable),
        ('I/O queue refused once its admin queue is gone', io_outlives_admin),
        ('admin SQHD wraps at the queue size from Connect', admin_sqhd_wraps),
        ('Security Send/Receive protocol 2: VERIFY_COMID_VALID and STACK_RESET', comid_management),
        ('Security Send protocol 2 with an unknown request code: Invalid Field', comid_unknown_request),
    ]

    print('1..%d' % (len(checks) + 5))
    n = 0
    for name, check in checks:
        n += 1
        try:
            good = check()
        except Exception as e:	# a hang, a crash or a wrong answer
            good = False
            name += ' (%s: %s)' % (type(e).__name__, e)
        print('%s %d - %s' % ('ok' if good else 'not ok', n, name))
        sys.stdout.flush()

    n += 1
    try:
        r = io.cmd(sqe(0x02, 40, nsid=1, sgl_len=4096, dw={12: 7}))
        r2 = admin.cmd(sqe(0x06, 41, sgl_len=4096, dw={10: 1}))
        good = r[0] == 0 and len(r[1]) == 4096 and r2[0] == 0 and len(r2[1]) == 4096
    except Exception:
        good = False
    print('%s %d - the first connections are still served' % ('ok' if good else 'not ok', n))

    # A Controller Reset (CC.EN 1 to 0) deletes the I/O queues: the I/O
    # connection is refused, even once the controller is enabled again.
    n += 1
    try:
        c = fresh()
        cn = c.connect(0)
        c.prop(0x14, 1)
        q = io_conn_for(cn)
        before = q.cmd(sqe(0x02, 80, nsid=1, sgl_len=512))[0]
        c.prop(0x14, 0)
        c.prop(0x14, 1)
        after = q.cmd(sqe(0x02, 81, nsid=1, sgl_len=512))[0]
        q.close()
        c.close()
        good = before == 0 and after == SC_CMD_SEQ_ERROR
    except Exception as e:
        good = False
        print('# %s: %s' % (type(e).__name__, e))
    print('%s %d - a controller reset deletes the I/O queues' % ('ok' if good else 'not ok', n))

    # NVM Subsystem Reset: CAP.NSSRS; NSSR reads 0; a value other than
    # "NVMe" does nothing; "NVMe" resets every controller (EN and RDY clear,
    # CSTS.NSSRO set, commands refused, I/O queues gone) and is a TCG
    # Hardware Reset of the drive.
    n += 1
    try:
        cap = admin.prop(0x00)
        nssr = admin.prop(0x20)
        admin.prop(0x20, 0x12345678)
        still = admin.prop(0x1c)
        admin.prop(0x20, 0x4E564D65)
        csts = admin.prop(0x1c)
        refused = admin.cmd(sqe(0x06, 90, sgl_len=4096, dw={10: 1}))[0]
        admin.prop(0x14, 1)
        again = admin.prop(0x1c)
        served = admin.cmd(sqe(0x06, 91, sgl_len=4096, dw={10: 1}))[0]
        io_after = io.cmd(sqe(0x02, 92, nsid=1, sgl_len=512))[0]
        good = ((cap >> 36) & 1 == 1 and nssr == 0 and still == 1 and csts == 0x10 and
                refused == SC_CMD_SEQ_ERROR and again == 1 and served == 0 and
                io_after == SC_CMD_SEQ_ERROR)
        if not good:
            print('# cap %#x nssr %#x still %#x csts %#x refused %#x again %#x served %#x io %#x' %
                  (cap, nssr, still, csts, refused, again, served, io_after))
    except Exception as e:
        good = False
        print('# %s: %s' % (type(e).__name__, e))
    print('%s %d - NVM Subsystem Reset resets every controller' % ('ok' if good else 'not ok', n))
    io.close()
    admin.close()
    n += 1
    rc = target.stop()
    print('%s %d - target exits 0 on SIGTERM' % ('ok' if rc == 0 else 'not ok', n))
    n += 1
    good = 'NVM Subsystem Reset (a TCG Hardware Reset of the drive)' in target.log
    print('%s %d - the NVM Subsystem Reset reached the drive as a TCG Hardware Reset' %
          ('ok' if good else 'not ok', n))


if __name__ == '__main__':
    main()
