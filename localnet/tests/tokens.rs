//! SPL Token and Token-2022 through the RPC a validator offers for them: balances, supplies,
//! holders, and accounts parsed by jsonParsed; and the chain's supply and largest accounts.
mod common;

use common::*;
use serde_json::{json, Value};
use solana_instruction::Instruction;
use solana_keypair::Keypair;
use solana_pubkey::Pubkey;
use solana_signer::Signer;
use solana_transaction::Transaction;
use spl_token_2022_interface::instruction as token;

const SOL: u64 = 1_000_000_000;
const MINT_LEN: usize = 82;
const ACCOUNT_LEN: usize = 165;
const TOKEN: Pubkey = Pubkey::from_str_const("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
const TOKEN_2022: Pubkey = Pubkey::from_str_const("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");

/// A mint with six decimals and two holders: `rich` holds 1.5 tokens, `poor` 0.00025 and has
/// approved `delegate`.
struct Tokens {
    /// The transaction that made them.
    signature: Value,
    mint_authority: Pubkey,
    mint: Pubkey,
    rich: Pubkey,
    rich_owner: Pubkey,
    poor: Pubkey,
    delegate: Pubkey,
}

fn create(
    net: &Localnet,
    payer: &Keypair,
    account: &Keypair,
    len: usize,
    program: &Pubkey,
) -> Instruction {
    let rent = net
        .ok("getMinimumBalanceForRentExemption", json!([len]))
        .as_u64()
        .unwrap();
    solana_system_interface::instruction::create_account(
        &payer.pubkey(),
        &account.pubkey(),
        rent,
        len as u64,
        program,
    )
}

fn setup(net: &Localnet, program: &Pubkey) -> Tokens {
    let payer = Keypair::new();
    net.airdrop(&payer, 10 * SOL);
    let (mint, rich, poor) = (Keypair::new(), Keypair::new(), Keypair::new());
    let (rich_owner, poor_owner, delegate) = (Keypair::new(), Keypair::new(), Pubkey::new_unique());
    let instructions = [
        create(net, &payer, &mint, MINT_LEN, program),
        token::initialize_mint2(program, &mint.pubkey(), &payer.pubkey(), None, 6).unwrap(),
        create(net, &payer, &rich, ACCOUNT_LEN, program),
        token::initialize_account3(
            program,
            &rich.pubkey(),
            &mint.pubkey(),
            &rich_owner.pubkey(),
        )
        .unwrap(),
        create(net, &payer, &poor, ACCOUNT_LEN, program),
        token::initialize_account3(
            program,
            &poor.pubkey(),
            &mint.pubkey(),
            &poor_owner.pubkey(),
        )
        .unwrap(),
        token::mint_to(
            program,
            &mint.pubkey(),
            &rich.pubkey(),
            &payer.pubkey(),
            &[],
            1_500_000,
        )
        .unwrap(),
        token::mint_to(
            program,
            &mint.pubkey(),
            &poor.pubkey(),
            &payer.pubkey(),
            &[],
            250,
        )
        .unwrap(),
        token::approve(
            program,
            &poor.pubkey(),
            &delegate,
            &poor_owner.pubkey(),
            &[],
            100,
        )
        .unwrap(),
    ];
    let tx = Transaction::new_signed_with_payer(
        &instructions,
        Some(&payer.pubkey()),
        &[&payer, &mint, &rich, &poor, &poor_owner],
        net.blockhash(),
    );
    let sent = net.send(&tx, json!({}));
    assert!(sent.get("error").is_none(), "token setup: {sent}");
    Tokens {
        signature: sent["result"].clone(),
        mint_authority: payer.pubkey(),
        mint: mint.pubkey(),
        rich: rich.pubkey(),
        rich_owner: rich_owner.pubkey(),
        poor: poor.pubkey(),
        delegate,
    }
}

fn addresses(listed: &Value) -> Vec<String> {
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            entry
                .get("pubkey")
                .or(entry.get("address"))
                .unwrap()
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn token_balances_supplies_and_holders_for_both_token_programs() {
    let net = Localnet::start();
    for (program, name) in [(TOKEN, "spl-token"), (TOKEN_2022, "spl-token-2022")] {
        let t = setup(&net, &program);
        let s = |key: &Pubkey| key.to_string();

        let balance = net.ok(
            "getTokenAccountBalance",
            json!([s(&t.rich), {"commitment": "confirmed"}]),
        )["value"]
            .clone();
        assert_eq!(
            balance,
            json!({"amount": "1500000", "decimals": 6, "uiAmount": 1.5, "uiAmountString": "1.5"})
        );
        let supply = net.ok(
            "getTokenSupply",
            json!([s(&t.mint), {"commitment": "confirmed"}]),
        )["value"]
            .clone();
        assert_eq!(supply["amount"], "1500250");
        assert_eq!(supply["uiAmountString"], "1.50025");

        let largest = net.ok(
            "getTokenLargestAccounts",
            json!([s(&t.mint), {"commitment": "confirmed"}]),
        )["value"]
            .clone();
        assert_eq!(addresses(&largest), [s(&t.rich), s(&t.poor)]);
        assert_eq!(largest[1]["amount"], "250");

        for filter in [
            json!({"mint": s(&t.mint)}),
            json!({"programId": s(&program)}),
        ] {
            let owned = net.ok(
                "getTokenAccountsByOwner",
                json!([s(&t.rich_owner), filter, {"commitment": "confirmed", "encoding": "jsonParsed"}]),
            )["value"]
                .clone();
            assert_eq!(addresses(&owned), [s(&t.rich)], "{filter}");
            let data = &owned[0]["account"]["data"];
            assert_eq!(data["program"], name);
            assert_eq!(data["parsed"]["type"], "account");
            assert_eq!(data["parsed"]["info"]["tokenAmount"]["amount"], "1500000");
        }
        let encoded = net.ok(
            "getTokenAccountsByOwner",
            json!([s(&t.rich_owner), {"mint": s(&t.mint)}, {"commitment": "confirmed", "encoding": "base64"}]),
        )["value"]
            .clone();
        assert_eq!(encoded[0]["account"]["data"][1], "base64");
        let delegated = net.ok(
            "getTokenAccountsByDelegate",
            json!([s(&t.delegate), {"programId": s(&program)}, {"commitment": "confirmed", "encoding": "base64"}]),
        )["value"]
            .clone();
        assert_eq!(addresses(&delegated), [s(&t.poor)]);

        let mint = net.ok(
            "getAccountInfo",
            json!([s(&t.mint), {"commitment": "confirmed", "encoding": "jsonParsed"}]),
        )["value"]
            .clone();
        assert_eq!(mint["data"]["program"], name);
        assert_eq!(mint["data"]["parsed"]["type"], "mint");
        assert_eq!(mint["data"]["parsed"]["info"]["decimals"], 6);
        assert_eq!(mint["data"]["parsed"]["info"]["supply"], "1500250");

        let wrong = [
            (
                "getTokenAccountBalance",
                json!([s(&t.mint), {"commitment": "confirmed"}]),
                "not a Token account",
            ),
            (
                "getTokenAccountBalance",
                json!([s(&Pubkey::new_unique())]),
                "could not find account",
            ),
            (
                "getTokenSupply",
                json!([s(&t.rich), {"commitment": "confirmed"}]),
                "not a Token mint",
            ),
            (
                "getTokenLargestAccounts",
                json!([s(&Pubkey::new_unique())]),
                "could not find mint",
            ),
            (
                "getTokenAccountsByOwner",
                json!([s(&t.rich_owner), {"programId": s(&Pubkey::default())}]),
                "unrecognized Token program id",
            ),
            (
                "getTokenAccountsByOwner",
                json!([s(&t.rich_owner), {"owner": s(&t.mint)}]),
                "params[1]",
            ),
            (
                "getTokenAccountsByOwner",
                json!([s(&t.rich_owner)]),
                "params[1] is missing",
            ),
            // Agave's default encoding is base58, which no token account fits.
            (
                "getTokenAccountsByDelegate",
                json!([s(&t.delegate), {"programId": s(&program)}, {"commitment": "confirmed"}]),
                "base 58",
            ),
        ];
        for (method, params, why) in wrong {
            let error = net.err(method, params.clone());
            assert_eq!(error["code"], -32602, "{method} {params}");
            assert!(
                error["message"].as_str().unwrap().contains(why),
                "{method}: {error}"
            );
        }
    }
}

#[test]
fn json_parsed_transactions_parse_token_instructions_as_agave_does() {
    let net = Localnet::start();
    for program in [TOKEN, TOKEN_2022] {
        let t = setup(&net, &program);
        let fetched = net.ok(
            "getTransaction",
            json!([t.signature, {"commitment": "confirmed", "encoding": "jsonParsed"}]),
        );
        let instructions = fetched["transaction"]["message"]["instructions"]
            .as_array()
            .unwrap();
        let kinds: Vec<(&str, &str)> = instructions
            .iter()
            .map(|ix| {
                (
                    ix["program"].as_str().unwrap(),
                    ix["parsed"]["type"].as_str().unwrap(),
                )
            })
            .collect();
        let create = ("system", "createAccount");
        let (initialize_mint, initialize_account, mint_to, approve) = (
            ("spl-token", "initializeMint2"),
            ("spl-token", "initializeAccount3"),
            ("spl-token", "mintTo"),
            ("spl-token", "approve"),
        );
        assert_eq!(
            kinds,
            [
                create,
                initialize_mint,
                create,
                initialize_account,
                create,
                initialize_account,
                mint_to,
                mint_to,
                approve
            ]
        );
        assert_eq!(instructions[1]["programId"], program.to_string());
        assert_eq!(instructions[1]["parsed"]["info"]["decimals"], 6);
        assert_eq!(
            instructions[6]["parsed"]["info"],
            json!({"mint": t.mint.to_string(), "account": t.rich.to_string(),
                   "amount": "1500000", "mintAuthority": t.mint_authority.to_string()})
        );
        let approved = &instructions[8]["parsed"]["info"];
        assert_eq!(approved["source"], t.poor.to_string());
        assert_eq!(approved["delegate"], t.delegate.to_string());
        assert_eq!(approved["amount"], "100");
    }
}

#[test]
fn jsonparsed_parses_what_agave_parses_and_falls_back_to_base64() {
    let net = Localnet::start();
    let clock = net.ok(
        "getAccountInfo",
        json!(["SysvarC1ock11111111111111111111111111111111", {"commitment": "confirmed", "encoding": "jsonParsed"}]),
    )["value"]["data"]
        .clone();
    assert_eq!(clock["program"], "sysvar");
    assert_eq!(clock["parsed"]["type"], "clock");
    let wallet = Keypair::new();
    net.airdrop(&wallet, SOL);
    let plain = net.ok(
        "getAccountInfo",
        json!([wallet.pubkey().to_string(), {"commitment": "confirmed", "encoding": "jsonParsed"}]),
    )["value"]["data"]
        .clone();
    assert_eq!(plain, json!(["", "base64"]));
}

#[test]
fn supply_and_largest_accounts_cover_every_known_account() {
    let net = Localnet::start();
    let wallet = Keypair::new();
    net.airdrop(&wallet, 7 * SOL);
    let supply = net.ok("getSupply", json!([{"commitment": "confirmed"}]))["value"].clone();
    let total = supply["total"].as_u64().unwrap();
    assert!(total > 7 * SOL);
    assert_eq!(supply["circulating"], total);
    assert_eq!(supply["nonCirculating"], 0);
    assert_eq!(supply["nonCirculatingAccounts"], json!([]));

    let largest =
        net.ok("getLargestAccounts", json!([{"commitment": "confirmed"}]))["value"].clone();
    let lamports: Vec<u64> = largest
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["lamports"].as_u64().unwrap())
        .collect();
    assert!(!lamports.is_empty() && lamports.len() <= 20);
    assert!(
        lamports.windows(2).all(|pair| pair[0] >= pair[1]),
        "{lamports:?}"
    );
    assert!(lamports.iter().sum::<u64>() <= total);
    assert_eq!(
        net.ok(
            "getLargestAccounts",
            json!([{"filter": "nonCirculating", "commitment": "confirmed"}])
        )["value"],
        json!([])
    );
    assert_eq!(
        net.err("getLargestAccounts", json!([{"filter": "everything"}]))["code"],
        -32602
    );
}
