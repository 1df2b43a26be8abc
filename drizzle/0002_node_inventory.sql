CREATE TABLE "node_inventory" (
	"id" text PRIMARY KEY NOT NULL,
	"hostname" text DEFAULT '' NOT NULL,
	"mac" text NOT NULL,
	"arch" text DEFAULT 'X86' NOT NULL,
	"role" text DEFAULT 'Compute' NOT NULL,
	"sub_role" text DEFAULT '' NOT NULL,
	"groups" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"locked" boolean DEFAULT false NOT NULL,
	"bmc_driver" text DEFAULT 'none' NOT NULL,
	"bmc_address" text DEFAULT '' NOT NULL,
	"bmc_username" text DEFAULT '' NOT NULL,
	"bmc_secret" text DEFAULT '' NOT NULL,
	"boot_kernel" text DEFAULT '' NOT NULL,
	"boot_initrd" text DEFAULT '' NOT NULL,
	"boot_params" text DEFAULT '' NOT NULL,
	"boot_token" text DEFAULT '' NOT NULL,
	"boot_set_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "node_inventory_bmc_driver_ck" CHECK ("node_inventory"."bmc_driver" in ('ipmi','redfish','none')),
	CONSTRAINT "node_inventory_arch_ck" CHECK ("node_inventory"."arch" in ('X86','ARM','Other','Unknown'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "node_inventory_mac_idx" ON "node_inventory" USING btree ("mac");