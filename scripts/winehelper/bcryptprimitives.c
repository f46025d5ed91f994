/* A stand-in bcryptprimitives.dll for running Go test binaries under Debian 12's wine
 * 8.0, which lacks that DLL: Go's runtime (since Go 1.22) gets its random bytes from
 * ProcessPrng there. This forwards ProcessPrng to BCryptGenRandom, which wine has.
 * Test harness only (scripts/windows.sh wine); nothing of it ships. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
