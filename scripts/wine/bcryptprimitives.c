// A stand-in for Windows's bcryptprimitives.dll, which Go's runtime needs
// (ProcessPrng, from Go 1.24 on) and Debian's Wine 8.0 does not have. Built by
// scripts/wine-test.sh with mingw-w64 and put beside the test executables it runs.
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); // RtlGenRandom, advapi32

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
	while (length > 0) {
		ULONG n = length > 0x10000000 ? 0x10000000 : (ULONG)length;
		if (!SystemFunction036(data, n)) {
			return FALSE;
		}
		data += n;
		length -= n;
	}
	return TRUE;
}
