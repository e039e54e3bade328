// kinesalite ships no types; this is the part of its API the emulator helper uses.
declare module "kinesalite" {
  import type { Server } from "node:http";

  interface KinesaliteOptions {
    path?: string;
    createStreamMs?: number;
    deleteStreamMs?: number;
    updateStreamMs?: number;
    shardLimit?: number;
  }
  export default function kinesalite(options?: KinesaliteOptions): Server;
}
