export const QUARANTINE_FORMAT_VERSION = 1;

/** The latest instant a Date holds (8.64e15 ms), in epoch seconds: the bound of a record's arrival. */
export const MAX_ARRIVAL_SECONDS = 8_640_000_000_000;
