import { formatAddress, type ListenAddress } from "./listen_address.ts";

/** A listener the program will open, with the flag that chose its address. */
export interface PlannedListener {
  /** The flag or variable naming the address, for the error. */
  readonly flag: string;
  readonly addr: ListenAddress;
}

/** An address a program is configured to listen on is already taken. */
export class AddressInUseError extends Error {
  /** `flag` chose `address`, which another program holds. */
  constructor(readonly flag: string, readonly address: string, cause: unknown) {
    super(
      `Cannot listen on ${address} (${flag}): the address is already in use; choose another port or stop ` +
        "the program using it",
      { cause },
    );
    this.name = "AddressInUseError";
  }
}

/**
 * Binds and releases every planned address (port 0 excepted) before the program opens any of them, so that
 * a taken port stops startup with the flag and address and nothing served meanwhile. Other bind failures
 * (an address not on this host, no permission) are reported the same way with their reason.
 */
export function checkPortsFree(planned: readonly PlannedListener[]): void {
  for (const { flag, addr } of planned) {
    if (addr.port === 0) continue;
    let listener: Deno.Listener;
    try {
      listener = Deno.listen({ hostname: addr.hostname, port: addr.port });
    } catch (error) {
      const address = formatAddress(addr.hostname, addr.port);
      if (error instanceof Deno.errors.AddrInUse) throw new AddressInUseError(flag, address, error);
      throw new Error(`Cannot listen on ${address} (${flag}): ${(error as Error).message}`, { cause: error });
    }
    listener.close();
  }
}
