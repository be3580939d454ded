//! The SearXNG backend: `GET {instance}/search?q=…&format=json`, filtered and cut to the limit.

use std::time::Duration;

use reqwest::header::ACCEPT;
use reqwest::{Client, StatusCode, Url};
use serde_json::Value;
use web_support::{describe_error, status_error};

use crate::backend::Searxng;
use crate::domains::DomainFilter;
use crate::results::Hit;

/// The search URL for a query.
pub fn search_url(instance: &Searxng, query: &str) -> Result<Url, String> {
    let mut url = Url::parse(&format!("{}/search", instance.base_url))
        .map_err(|e| format!("web.search.searxng_url is not a valid URL ({e})"))?;
    url.query_pairs_mut()
        .append_pair("q", query)
        .append_pair("format", "json");
    Ok(url)
}

/// Runs a search; errors are single lines for `Error performing web search: …`.
pub async fn search(
    client: &Client,
    instance: &Searxng,
    query: &str,
    filter: &DomainFilter,
    timeout: Duration,
) -> Result<Vec<Hit>, String> {
    let response = client
        .get(search_url(instance, query)?)
        .header(ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| describe_error(&e, timeout))?;
    let status = response.status();
    if status == StatusCode::FORBIDDEN {
        return Err(format!(
            "{} (SearXNG refuses format=json unless json is listed under search.formats in its settings.yml)",
            status_error(status)
        ));
    }
    if !status.is_success() {
        return Err(status_error(status));
    }
    let text = response
        .text()
        .await
        .map_err(|e| describe_error(&e, timeout))?;
    let answer: Value =
        serde_json::from_str(&text).map_err(|e| format!("the SearXNG answer is not JSON ({e})"))?;
    Ok(hits(&answer, filter, instance.max_results))
}

/// The results of an answer that pass the filter, at most `max`.
pub fn hits(answer: &Value, filter: &DomainFilter, max: usize) -> Vec<Hit> {
    answer
        .get("results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(Hit::from_json)
        .filter(|hit| !hit.url.is_empty() && filter.keeps(&hit.url))
        .take(max)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn instance(base: &str) -> Searxng {
        Searxng {
            base_url: base.to_string(),
            max_results: 2,
        }
    }

    #[test]
    fn the_query_is_encoded() {
        assert_eq!(
            search_url(&instance("http://127.0.0.1:8888/searx"), "rust & tokio?").map(String::from),
            Ok("http://127.0.0.1:8888/searx/search?q=rust+%26+tokio%3F&format=json".to_string())
        );
    }

    #[test]
    fn results_are_filtered_then_cut() {
        let answer = json!({"results": [
            {"title": "A", "url": "https://a.com/1"},
            {"title": "No URL"},
            {"title": "B", "url": "https://b.com/1"},
            {"title": "A2", "url": "https://docs.a.com/2"},
            {"title": "A3", "url": "https://a.com/3"},
        ]});
        let filter = DomainFilter::Allow(vec!["a.com".to_string()]);
        assert_eq!(
            hits(&answer, &filter, 2),
            vec![
                Hit {
                    title: "A".to_string(),
                    url: "https://a.com/1".to_string()
                },
                Hit {
                    title: "A2".to_string(),
                    url: "https://docs.a.com/2".to_string()
                },
            ]
        );
        assert_eq!(hits(&json!({}), &DomainFilter::None, 5), Vec::<Hit>::new());
    }
}
