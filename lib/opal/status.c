// SPDX-License-Identifier: GPL-2.0-only
/* Method status codes and library errors as one-line messages. */
#include "opal.h"

const char *opal_strerror(int err)
{
	switch (err) {
	case OPAL_ST_SUCCESS: return "success";
	case OPAL_ST_NOT_AUTHORIZED: return "authentication failed or not authorized";
	case OPAL_ST_OBSOLETE: return "obsolete method";
	case OPAL_ST_SP_BUSY: return "security provider busy";
	case OPAL_ST_SP_FAILED: return "security provider failed";
	case OPAL_ST_SP_DISABLED: return "security provider disabled (Locking SP not activated?)";
	case OPAL_ST_SP_FROZEN: return "security provider frozen";
	case OPAL_ST_NO_SESSIONS_AVAILABLE: return "no sessions available on the drive";
	case OPAL_ST_UNIQUENESS_CONFLICT: return "uniqueness conflict";
	case OPAL_ST_INSUFFICIENT_SPACE: return "insufficient space";
	case OPAL_ST_INSUFFICIENT_ROWS: return "insufficient rows";
	case OPAL_ST_INVALID_PARAMETER: return "invalid parameter";
	case OPAL_ST_TPER_MALFUNCTION: return "drive (TPer) malfunction";
	case OPAL_ST_TRANSACTION_FAILURE: return "transaction failure";
	case OPAL_ST_RESPONSE_OVERFLOW: return "response overflow";
	case OPAL_ST_AUTHORITY_LOCKED_OUT: return "authority locked out (too many failed attempts; power-cycle the drive)";
	case OPAL_ST_FAIL: return "method failed";
	case OPAL_ERR_PROTOCOL: return "malformed response from the drive";
	case OPAL_ERR_TRANSPORT: return "transport error";
	case OPAL_ERR_TIMEOUT: return "drive did not answer in time";
	case OPAL_ERR_UNSUPPORTED: return "not supported by the drive or transport";
	case OPAL_ERR_AUTH: return "authentication failed";
	case OPAL_ERR_INVAL: return "invalid argument";
	case OPAL_ERR_NOMEM: return "out of memory";
	case OPAL_ERR_NOT_OPAL: return "not an Opal drive (no Opal SSC in Level 0 Discovery)";
	case OPAL_ERR_TOO_LARGE: return "call larger than the drive accepts (its MaxComPacketSize or MaxIndTokenSize): not sent";
	case OPAL_ERR_SESSION_CLOSED: return "the drive ended the session (CloseSession): the call was not completed";
	default: return "unknown status";
	}
}
